import json,sys,glob,collections
d=sys.argv[1]
res=collections.defaultdict(dict)
for f in glob.glob(d+'/b_*.json'):
    base=f.split('/')[-1][2:-5]
    v,lay,r=base.rsplit('_',2)
    try: j=json.load(open(f))
    except Exception as e: print('bad',f,e); continue
    for s in j['shapes']:
        for mm in s['measurements']:
            if mm['implementation'] in ('tuned',):
                key=(s['m'],s['n'],s['k'],lay,mm['config'])
                res[key][v]=min(res[key].get(v,1e9),mm['time_us'])
vs=sys.argv[2].split(',')
print('shape layout config', *vs)
for k in sorted(res):
    b=res[k].get(vs[0])
    print(*k, *['%.2f'%res[k][v] if v in res[k] else '-' for v in vs], *['%+.1f%%'%((res[k][v]/b-1)*100) for v in vs[1:] if v in res[k] and b])
