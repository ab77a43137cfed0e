//! The work list: every (shape, M) pair in a fixed order, and the deterministic subset one
//! shard of a cluster run takes.

use crate::error::{Error, Result};

use super::shapes::WeightShape;

/// The batch sizes of every shipped vLLM/SGLang config file.
pub const DEFAULT_BATCH_SIZES: [usize; 18] = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096];

/// One unit of tuning work: one weight shape at one batch size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorkItem {
    pub n: usize,
    pub k: usize,
    pub block: (usize, usize),
    pub m: usize,
}

/// Shard `index` of `count` (0-based, like `SLURM_ARRAY_TASK_ID` with `--array=0-(N-1)` and
/// Kubernetes' `JOB_COMPLETION_INDEX`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Default for Shard {
    fn default() -> Self {
        Shard { index: 0, count: 1 }
    }
}

impl Shard {
    pub fn new(index: usize, count: usize) -> Result<Shard> {
        if count == 0 || index >= count {
            return Err(Error::invalid("tune", format!("shard {index}/{count}: need 0 <= I < N")));
        }
        Ok(Shard { index, count })
    }
    /// Whether item number `position` of the full work list belongs to this shard.
    pub fn owns(&self, position: usize) -> bool {
        position % self.count == self.index
    }
    /// Used in journal names so shards sharing a folder never share a journal.
    pub fn tag(&self) -> String {
        format!("shard{}of{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = Error;
    /// `I/N`, 0-based.
    fn from_str(s: &str) -> Result<Shard> {
        let bad = || Error::invalid("tune", format!("shard {s:?}: expected I/N with 0 <= I < N, e.g. 0/4"));
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let i = i.trim().parse().map_err(|_| bad())?;
        let n = n.trim().parse().map_err(|_| bad())?;
        Shard::new(i, n).map_err(|_| bad())
    }
}

/// Checks and sorts batch sizes (ascending, no repeats, all >= 1).
pub fn normalize_batch_sizes(sizes: &[usize]) -> Result<Vec<usize>> {
    if sizes.is_empty() {
        return Err(Error::invalid("tune", "no batch sizes given"));
    }
    if sizes.contains(&0) {
        return Err(Error::invalid("tune", "batch size 0 is not a batch size"));
    }
    let mut v = sizes.to_vec();
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

/// The full work list, shapes in the given order and M ascending within a shape. Sharding
/// takes every `count`-th item, so each shard gets a spread of small and large M (which
/// balances shards, large M being slower to time).
pub fn full_work_list(shapes: &[WeightShape], batch_sizes: &[usize]) -> Vec<WorkItem> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for s in shapes {
        if !seen.insert(s.key()) {
            continue;
        }
        for &m in batch_sizes {
            out.push(WorkItem { n: s.n, k: s.k, block: s.block, m });
        }
    }
    out
}

/// The items of `shard`, in work-list order.
pub fn shard_work_list(shapes: &[WeightShape], batch_sizes: &[usize], shard: Shard) -> Vec<WorkItem> {
    full_work_list(shapes, batch_sizes).into_iter().enumerate().filter(|(i, _)| shard.owns(*i)).map(|(_, w)| w).collect()
}
