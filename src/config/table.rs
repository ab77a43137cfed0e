//! One config file: batch size M -> KernelConfig, with the nearest-M rule.
//!
//! [`ConfigTable::parse`] accepts every file shape vLLM ships (AMD keys, absent
//! `num_stages`, unknown keys kept verbatim, a top-level `triton_version` which it drops
//! as vLLM does) and rejects anything it could not launch safely, with a reason that names
//! the offending entry and key.

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::KernelConfig;

/// Files larger than this are rejected before parsing (real files are a few KiB).
pub const MAX_FILE_BYTES: usize = 16 << 20;
/// Most batch-size entries one file may hold (real files have 18).
pub const MAX_ENTRIES: usize = 8192;
/// Largest batch-size key accepted: 2^31.
pub const MAX_M: u64 = 1 << 31;
/// Most unknown keys one entry may carry.
pub const MAX_EXTRA_KEYS: usize = 64;
/// Longest key accepted, top level or inside an entry.
pub const MAX_KEY_LEN: usize = 128;

/// The top-level key vLLM's MoE writer adds and its loader drops.
const TRITON_VERSION_KEY: &str = "triton_version";

#[derive(Clone, Debug, PartialEq)]
pub struct ConfigTable {
    /// Ascending by M.
    pub entries: Vec<(usize, KernelConfig)>,
}

impl ConfigTable {
    /// Parses and validates one file's text.
    pub fn parse(text: &str) -> Result<ConfigTable, String> {
        if text.len() > MAX_FILE_BYTES {
            return Err(format!("file is {} bytes, more than the {MAX_FILE_BYTES}-byte limit", text.len()));
        }
        let top: TopObject = match serde_json::from_str(text) {
            Ok(t) => t,
            Err(e) => return Err(format!("not a config object: {e}")),
        };
        let mut entries = Vec::with_capacity(top.0.len());
        for (key, value) in top.0 {
            if key == TRITON_VERSION_KEY {
                match value {
                    Item::Str => continue,
                    other => return Err(format!("\"{TRITON_VERSION_KEY}\" must be a string, found {}", other.kind())),
                }
            }
            let m = parse_batch_key(&key)?;
            let fields = match value {
                Item::Object(fields) => fields,
                other => return Err(format!("entry {key:?}: expected an object of launch parameters, found {}", other.kind())),
            };
            let cfg = entry_from_fields(fields).map_err(|e| format!("entry {key:?}: {e}"))?;
            entries.push((m, cfg));
        }
        ConfigTable::from_entries(entries)
    }

    /// Sorts by M and validates every entry; the same checks as [`ConfigTable::parse`].
    pub fn from_entries(mut entries: Vec<(usize, KernelConfig)>) -> Result<ConfigTable, String> {
        if entries.is_empty() {
            return Err("no batch-size entries (empty object)".into());
        }
        if entries.len() > MAX_ENTRIES {
            return Err(format!("{} entries, more than the limit of {MAX_ENTRIES}", entries.len()));
        }
        entries.sort_by_key(|(m, _)| *m);
        for w in entries.windows(2) {
            if w[0].0 == w[1].0 {
                return Err(format!("batch size {} appears twice", w[0].0));
            }
        }
        for (m, cfg) in &entries {
            if *m == 0 || *m as u64 > MAX_M {
                return Err(format!("batch size {m} outside 1..={MAX_M}"));
            }
            cfg.validate().map_err(|e| format!("entry \"{m}\": {e}"))?;
        }
        Ok(ConfigTable { entries })
    }

    /// The entry whose key is nearest to `m`; a tie goes to the smaller key, an `m` beyond
    /// the grid takes the largest. `None` only for a table with no entries.
    pub fn nearest(&self, m: usize) -> Option<(usize, &KernelConfig)> {
        self.nearest_index(m).map(|i| (self.entries[i].0, &self.entries[i].1))
    }

    /// The index into `entries` of [`nearest`](Self::nearest)'s pick.
    pub fn nearest_index(&self, m: usize) -> Option<usize> {
        nearest_key_index(self.entries.iter().map(|(key, _)| *key), self.entries.len(), m)
    }

    /// The vLLM layout: an object keyed by M as strings in ascending order, indent 4,
    /// trailing newline (what `json.dump(configs, f, indent=4)` plus "\n" writes).
    pub fn to_json(&self) -> String {
        let mut sorted: Vec<&(usize, KernelConfig)> = self.entries.iter().collect();
        sorted.sort_by_key(|(m, _)| *m);
        let mut top = Map::new();
        for (m, cfg) in sorted {
            top.insert(m.to_string(), cfg.to_json_value());
        }
        let value = Value::Object(top);
        let mut buf = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut buf, serde_json::ser::PrettyFormatter::with_indent(b"    "));
        let mut text = match serde::Serialize::serialize(&value, &mut ser) {
            // serde_json writes UTF-8 only.
            Ok(()) => String::from_utf8(buf).unwrap_or_else(|_| value.to_string()),
            Err(_) => value.to_string(),
        };
        text.push('\n');
        text
    }

    /// Smallest and largest batch size, or `None` for an empty table.
    pub fn m_range(&self) -> Option<(usize, usize)> {
        Some((self.entries.first()?.0, self.entries.last()?.0))
    }

    /// Checks that every entry can serve scale block (block_n, block_k): vLLM's kernel reads
    /// one scale per BLOCK_SIZE_K step, so BLOCK_SIZE_K must divide block_k. An entry only
    /// blockfp8 runs (`is_blockfp8_only`) may also span whole scale blocks (BLOCK_SIZE_K a
    /// multiple of block_k: the HIP kernel's skinny 16x64x256 tile folds each one).
    pub fn check_block(&self, block: (usize, usize)) -> Result<(), String> {
        for (m, cfg) in &self.entries {
            let bk = cfg.block_k as usize;
            let spans_whole_blocks = cfg.is_blockfp8_only() && block.1 > 0 && bk % block.1 == 0;
            if bk == 0 || (block.1 % bk != 0 && !spans_whole_blocks) {
                return Err(format!("entry \"{m}\": BLOCK_SIZE_K {bk} does not divide the scale block's K side {}", block.1));
            }
        }
        Ok(())
    }
}

impl KernelConfig {
    /// Range checks on the typed fields (the parser has already checked the JSON types).
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [("BLOCK_SIZE_M", self.block_m), ("BLOCK_SIZE_N", self.block_n), ("BLOCK_SIZE_K", self.block_k)] {
            let blockfp8_wide = name == "BLOCK_SIZE_N" && super::WIDE_BLOCK_NS.contains(&v);
            if !blockfp8_wide && (!v.is_power_of_two() || v > 1024) {
                let wide = super::WIDE_BLOCK_NS.map(|n| n.to_string()).join(" or ");
                return Err(format!("{name} = {v} is not a power of two in 1..=1024 (or {wide} for BLOCK_SIZE_N)"));
            }
        }
        if !(1..=4096).contains(&self.group_m) {
            return Err(format!("GROUP_SIZE_M = {} outside 1..=4096", self.group_m));
        }
        if !self.num_warps.is_power_of_two() || self.num_warps > 32 {
            return Err(format!("num_warps = {} is not a power of two in 1..=32", self.num_warps));
        }
        // 0 is the old ROCm Triton default and appears in AMD files.
        if let Some(s) = self.num_stages.filter(|s| *s > 16) {
            return Err(format!("num_stages = {s} outside 0..=16"));
        }
        if let Some(i) = self.matrix_instr_nonkdim.filter(|i| ![0, 4, 16, 32].contains(i)) {
            return Err(format!("matrix_instr_nonkdim = {i} is not one of 0, 4, 16, 32"));
        }
        if let Some(k) = self.kpack.filter(|k| ![1, 2].contains(k)) {
            return Err(format!("kpack = {k} is not 1 or 2"));
        }
        if let Some(w) = self.waves_per_eu.filter(|w| *w > 32) {
            return Err(format!("waves_per_eu = {w} outside 0..=32"));
        }
        if let Some(v) = self.extra.get(super::SPLIT_K_KEY) {
            if !v.as_u64().is_some_and(|s| (1..=1024).contains(&s)) {
                return Err(format!("{} = {v} is not an integer in 1..=1024", super::SPLIT_K_KEY));
            }
        }
        if let Some(c) = self.extra.get(super::CLUSTER_KEY) {
            if !matches!(c.as_u64(), Some(1 | 2)) {
                return Err(format!("{} = {c} is not 1 or 2", super::CLUSTER_KEY));
            }
        }
        if let Some(v) = self.extra.get(super::CLUSTER_SPLITS_K_KEY) {
            if !v.is_boolean() {
                return Err(format!("{} = {v} is not true or false", super::CLUSTER_SPLITS_K_KEY));
            }
            if self.cluster_splits_k() && self.cluster() != 2 {
                return Err(format!("{} = true needs {} = 2 (the pair that splits each tile's K range)", super::CLUSTER_SPLITS_K_KEY, super::CLUSTER_KEY));
            }
            if self.cluster_splits_k() && self.extra.get(super::SPLIT_K_KEY).is_some_and(|s| s.as_u64() != Some(1)) {
                return Err(format!("{} = true with {} = {}: the pair's K split takes no workspace split besides", super::CLUSTER_SPLITS_K_KEY, super::SPLIT_K_KEY, self.extra[super::SPLIT_K_KEY]));
            }
        }
        if let Some(v) = self.extra.get(super::SOURCE_KEY) {
            if v.as_str() != Some(super::SOURCE_PREDICTED) {
                return Err(format!("{} = {v} is not {:?}", super::SOURCE_KEY, super::SOURCE_PREDICTED));
            }
        }
        if let Some(v) = self.extra.get(super::PREDICTED_FOR_KEY) {
            if !v.as_str().is_some_and(|a| a.len() <= 8 && a.starts_with("gfx") && a[3..].bytes().all(|b| b.is_ascii_hexdigit())) {
                return Err(format!("{} = {v} is not an AMD architecture name (\"gfx942\")", super::PREDICTED_FOR_KEY));
            }
            if !self.is_predicted() {
                return Err(format!("{} without {} = {:?}", super::PREDICTED_FOR_KEY, super::SOURCE_KEY, super::SOURCE_PREDICTED));
            }
        }
        if self.extra.len() > MAX_EXTRA_KEYS {
            return Err(format!("{} unknown keys, more than the limit of {MAX_EXTRA_KEYS}", self.extra.len()));
        }
        Ok(())
    }

    /// The entry as vLLM writes it: typed keys first, in vLLM's order, then unknown keys.
    pub fn to_json_value(&self) -> Value {
        let mut o = Map::new();
        o.insert("BLOCK_SIZE_M".into(), self.block_m.into());
        o.insert("BLOCK_SIZE_N".into(), self.block_n.into());
        o.insert("BLOCK_SIZE_K".into(), self.block_k.into());
        o.insert("GROUP_SIZE_M".into(), self.group_m.into());
        o.insert("num_warps".into(), self.num_warps.into());
        for (name, v) in [("num_stages", self.num_stages), ("matrix_instr_nonkdim", self.matrix_instr_nonkdim), ("kpack", self.kpack), ("waves_per_eu", self.waves_per_eu)] {
            if let Some(v) = v {
                o.insert(name.into(), v.into());
            }
        }
        for (k, v) in &self.extra {
            o.entry(k.clone()).or_insert_with(|| v.clone());
        }
        Value::Object(o)
    }
}

/// "1", "4096": decimal digits, no sign, no leading zero, in 1..=2^31.
fn parse_batch_key(key: &str) -> Result<usize, String> {
    let shown: String = key.chars().take(40).collect();
    if key.is_empty() || !key.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("key {shown:?} is not a batch size (expected decimal digits, e.g. \"64\")"));
    }
    if key.len() > 1 && key.starts_with('0') {
        return Err(format!("key {shown:?} has a leading zero"));
    }
    match key.parse::<u64>() {
        Ok(m) if (1..=MAX_M).contains(&m) => usize::try_from(m).map_err(|_| format!("batch size {m} does not fit this platform")),
        _ => Err(format!("batch size {shown:?} outside 1..={MAX_M}")),
    }
}

const TYPED_KEYS: [&str; 9] = ["BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages", "matrix_instr_nonkdim", "kpack", "waves_per_eu"];

/// Typed keys must be non-negative JSON integers that fit u32; the rest go to `extra`.
fn entry_from_fields(fields: Vec<(String, Value)>) -> Result<KernelConfig, String> {
    let mut typed: [Option<u32>; 9] = [None; 9];
    let mut extra = Map::new();
    for (key, value) in fields {
        match TYPED_KEYS.iter().position(|k| *k == key) {
            Some(i) => typed[i] = Some(as_u32(&key, &value)?),
            None => {
                extra.insert(key, value);
            }
        }
    }
    let required = |i: usize| typed[i].ok_or_else(|| format!("missing {}", TYPED_KEYS[i]));
    Ok(KernelConfig {
        block_m: required(0)?,
        block_n: required(1)?,
        block_k: required(2)?,
        group_m: required(3)?,
        num_warps: required(4)?,
        num_stages: typed[5],
        matrix_instr_nonkdim: typed[6],
        kpack: typed[7],
        waves_per_eu: typed[8],
        extra,
    })
}

fn as_u32(key: &str, v: &Value) -> Result<u32, String> {
    match v {
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                u32::try_from(u).map_err(|_| format!("{key} = {u} is too large"))
            } else if n.as_i64().is_some() {
                Err(format!("{key} = {n} is negative"))
            } else {
                Err(format!("{key} = {n} is not an integer"))
            }
        }
        other => Err(format!("{key} must be an integer, found {}", kind_of(other))),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One top-level value: an entry object (its fields in file order), a string (its value is
/// unused: only `triton_version` may be one), or
/// something else (kept only to name it in an error).
enum Item {
    Object(Vec<(String, Value)>),
    Str,
    Other(&'static str),
}

impl Item {
    fn kind(&self) -> &'static str {
        match self {
            Item::Object(_) => "an object",
            Item::Str => "a string",
            Item::Other(k) => k,
        }
    }
}

/// The top-level object, keys in file order. serde_json's own map silently keeps the last
/// of duplicate keys; a config file with two values for one key is rejected instead.
struct TopObject(Vec<(String, Item)>);

impl<'de> Deserialize<'de> for TopObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TopObject;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object keyed by batch size")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TopObject, A::Error> {
                let mut out: Vec<(String, Item)> = Vec::new();
                let mut seen = HashSet::new();
                while let Some(key) = map.next_key::<String>()? {
                    check_key::<A::Error>(&key, &mut seen)?;
                    if out.len() > MAX_ENTRIES {
                        return Err(de::Error::custom(format!("more than {MAX_ENTRIES} entries")));
                    }
                    let item = map.next_value::<Item>()?;
                    out.push((key, item));
                }
                Ok(TopObject(out))
            }
        }
        d.deserialize_map(V)
    }
}

impl<'de> Deserialize<'de> for Item {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Item;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an entry object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Item, A::Error> {
                let mut out: Vec<(String, Value)> = Vec::new();
                let mut seen = HashSet::new();
                while let Some(key) = map.next_key::<String>()? {
                    check_key::<A::Error>(&key, &mut seen)?;
                    if out.len() >= TYPED_KEYS.len() + MAX_EXTRA_KEYS {
                        return Err(de::Error::custom("entry has too many keys"));
                    }
                    let value = map.next_value::<Value>()?;
                    out.push((key, value));
                }
                Ok(Item::Object(out))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Item, E> {
                Ok(Item::Str)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Item, E> {
                Ok(Item::Other("a boolean"))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Item, E> {
                Ok(Item::Other("a number"))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Item, E> {
                Ok(Item::Other("a number"))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Item, E> {
                Ok(Item::Other("a number"))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Item, E> {
                Ok(Item::Other("null"))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Item, A::Error> {
                // Consume the array so that the parser stays in step; its content is unused.
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(Item::Other("an array"))
            }
        }
        d.deserialize_any(V)
    }
}

/// Rejects over-long and duplicate keys.
fn check_key<E: de::Error>(key: &str, seen: &mut HashSet<String>) -> Result<(), E> {
    if key.len() > MAX_KEY_LEN {
        let shown: String = key.chars().take(40).collect();
        return Err(E::custom(format!("key {shown:?}... longer than {MAX_KEY_LEN} bytes")));
    }
    if !seen.insert(key.to_string()) {
        return Err(E::custom(format!("duplicate key {key:?}")));
    }
    Ok(())
}

/// The index of the key nearest to `m` among `len` ascending keys; a tie goes to the smaller
/// key, an `m` beyond the grid takes the largest. `None` only when there are no keys.
pub fn nearest_key_index(keys: impl Iterator<Item = usize> + Clone, len: usize, m: usize) -> Option<usize> {
    // First key >= m; the candidates are it and its predecessor.
    let i = keys.clone().take_while(|key| *key < m).count();
    let above = keys.clone().nth(i);
    let below = i.checked_sub(1).and_then(|j| keys.clone().nth(j));
    match (below, above) {
        (Some(b), Some(a)) => Some(if a - m < m - b { i } else { i - 1 }),
        (Some(_), None) => Some(len - 1),
        (None, Some(_)) => Some(i),
        (None, None) => None,
    }
}
