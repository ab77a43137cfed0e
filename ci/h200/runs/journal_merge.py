# Merges tuner journal records (their "config" is the file entry) into configs/.
import json,sys,glob,collections
fmt=lambda e: ('vendor[' if e.get('blockfp8_path')=='vendor' else '')+'%dx%d w%d s%d sk%d'%(e['BLOCK_SIZE_M'],e['BLOCK_SIZE_N'],e['num_warps'],e['num_stages'],e.get('SPLIT_K',1))
by=collections.defaultdict(dict)
for j in sys.argv[1:]:
    for l in open(j):
        r=json.loads(l); by[(r['n'],r['k'],r['device'])][str(r['m'])]=r
changed=0; same=0; lines=[]
for (n,k,dev),recs in sorted(by.items()):
    ship=f'configs/N={n},K={k},device_name={dev},dtype=fp8_w8a8,block_shape=[128,128].json'
    old=json.load(open(ship))
    for m,r in recs.items():
        e=r['config']; o=old.get(m)
        if o!=e:
            changed+=1; lines.append(f"N={n} K={k} M={m}: {fmt(o) if o else '-'} -> {fmt(e)} {r['time_us']:.2f}us (vendor {r['vendor_time_us']:.2f})"); old[m]=e
        else: same+=1
    out={kk:old[kk] for kk in sorted(old,key=lambda x:(not x.isdigit(), int(x) if x.isdigit() else 0))}
    s=json.dumps(out,indent=4)+'\n'
    open(ship,'w').write(s)
print(changed,'changed',same,'same'); print('\n'.join(lines))
