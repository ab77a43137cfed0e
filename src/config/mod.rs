//! Tuned kernel configs in the file format vLLM and SGLang users already have:
//! `N={N},K={K},device_name={DEV},dtype=fp8_w8a8,block_shape=[128,128].json`, each a JSON
//! object from batch size M to launch parameters; the nearest M wins (ties to the smaller).

use serde::{Deserialize, Serialize};

pub mod library;
pub mod naming;
pub mod table;

pub use library::{check_dir, embedded_configs, Attempt, ConfigSource, ConfigSummary, Library, Lookup, BATCH_INVARIANT_ENV, CONFIG_DIR_ENV};
pub use naming::{dense_file_name, moe_file_name, shape_arg, DEFAULT_BLOCK, parse_dense_file_name, parse_file_name, parse_moe_file_name, DenseKey, FileKey, MoeKey};
pub use table::ConfigTable;

/// Key in an entry recording that the tuner found nothing faster than the vendor BLAS path;
/// the kernel fields are still present, so vLLM-style loaders read the entry unchanged.
pub const PATH_KEY: &str = "blockfp8_path";

/// Key in an entry asking for thread-block clusters of this many CTAs (CUDA: pairs of tiles
/// sharing one weight tile through TMA multicast). Absent means 1. vLLM's launcher rejects
/// the key like `PATH_KEY`, so `tune --vllm-compatible` never picks such a candidate.
pub const CLUSTER_KEY: &str = "blockfp8_cluster";

/// Key in an entry (`true`) making a cluster's CTAs split each tile's K range and add their
/// sums on chip, instead of sharing the weight tile (CUDA: `CLUSTER_KEY` = 2 on the one-consumer
/// 64-row tiles; no workspace and no second launch, unlike `SPLIT_K_KEY`). Absent means false.
pub const CLUSTER_SPLITS_K_KEY: &str = "blockfp8_cluster_splits_k";

/// The BLOCK_SIZE_N values that are not powers of two which files may hold: CUDA's 128x144 and
/// 128x192 tiles (two warpgroups of 64x144 / 64x192; 192 the widest accumulators the registers
/// take). Only blockfp8 runs them, so like the keys above they keep a file from vLLM
/// (`is_blockfp8_only`).
pub const WIDE_BLOCK_NS: [u32; 2] = [144, 192];

/// Key in an entry fixing the number of K splits (CUDA; otherwise the backend's rule picks
/// it). The tuner writes the split it timed into files for this crate, so that a later rule
/// change leaves tuned entries as measured.
pub const SPLIT_K_KEY: &str = "SPLIT_K";

/// Key marking an entry that a model chose, not a measurement: `"blockfp8_source":
/// "predicted"` (the shipped AMD configs; hip/README.md documents the model). `blockfp8
/// tune` writes measured entries, which never carry it, so tuning on the device replaces
/// predictions; like `PATH_KEY` it keeps a file from vLLM, so `--vllm-compatible` output is
/// free of it.
pub const SOURCE_KEY: &str = "blockfp8_source";
/// The one value of `SOURCE_KEY`.
pub const SOURCE_PREDICTED: &str = "predicted";
/// Key naming the architecture a predicted entry was modeled for ("gfx942", "gfx950"): an
/// entry predicted for another architecture than the file's device is ignored with a
/// warning (the rest of the file, else the default path, serves).
pub const PREDICTED_FOR_KEY: &str = "blockfp8_predicted_for";

/// One entry's launch parameters. Fields the crate uses are typed; every other key is kept
/// verbatim in `extra` (AMD files' unknown keys, `triton_version`, ...).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelConfig {
    #[serde(rename = "BLOCK_SIZE_M")]
    pub block_m: u32,
    #[serde(rename = "BLOCK_SIZE_N")]
    pub block_n: u32,
    #[serde(rename = "BLOCK_SIZE_K")]
    pub block_k: u32,
    #[serde(rename = "GROUP_SIZE_M")]
    pub group_m: u32,
    pub num_warps: u32,
    /// Pipeline depth; many MI300X files omit it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_stages: Option<u32>,
    /// AMD: MFMA instruction shape, 16 (16x16x32) or 32 (32x32x16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix_instr_nonkdim: Option<u32>,
    /// AMD: K packing factor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kpack: Option<u32>,
    /// AMD: occupancy hint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waves_per_eu: Option<u32>,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl KernelConfig {
    /// vLLM's default dense config for block (block_n, block_k).
    pub fn vllm_default(block: (usize, usize)) -> Self {
        KernelConfig {
            block_m: 64,
            block_n: block.0 as u32,
            block_k: block.1 as u32,
            group_m: 32,
            num_warps: 4,
            num_stages: Some(2),
            matrix_instr_nonkdim: None,
            kpack: None,
            waves_per_eu: None,
            extra: Default::default(),
        }
    }

    /// Whether this entry records the vendor BLAS path as the winner.
    pub fn prefers_vendor(&self) -> bool {
        self.extra.get(PATH_KEY).and_then(|v| v.as_str()) == Some("vendor")
    }

    /// CTAs per cluster (`CLUSTER_KEY`, 1 when absent; `validate` rejects other values than 1
    /// and 2).
    pub fn cluster(&self) -> u32 {
        self.extra.get(CLUSTER_KEY).and_then(|v| v.as_u64()).map_or(1, |v| v.min(u32::MAX as u64) as u32)
    }

    /// Whether the cluster's CTAs split each tile's K range (`CLUSTER_SPLITS_K_KEY`).
    pub fn cluster_splits_k(&self) -> bool {
        self.extra.get(CLUSTER_SPLITS_K_KEY).and_then(|v| v.as_bool()) == Some(true)
    }

    /// Whether only blockfp8 can run the entry: it carries keys only blockfp8 reads (vLLM's
    /// launcher rejects them), or one of `WIDE_BLOCK_NS`, which vLLM's Triton kernel cannot run
    /// (its tiles are powers of two).
    pub fn is_blockfp8_only(&self) -> bool {
        WIDE_BLOCK_NS.contains(&self.block_n) || [PATH_KEY, CLUSTER_KEY, CLUSTER_SPLITS_K_KEY, SPLIT_K_KEY, SOURCE_KEY, PREDICTED_FOR_KEY].iter().any(|k| self.extra.contains_key(*k))
    }

    /// Whether a model chose this entry (`SOURCE_KEY` = "predicted") rather than a measurement.
    pub fn is_predicted(&self) -> bool {
        self.extra.get(SOURCE_KEY).and_then(|v| v.as_str()) == Some(SOURCE_PREDICTED)
    }

    /// The architecture a predicted entry was modeled for (`PREDICTED_FOR_KEY`).
    pub fn predicted_for(&self) -> Option<&str> {
        self.extra.get(PREDICTED_FOR_KEY).and_then(|v| v.as_str())
    }

    /// What `blockfp8 config show` says about where the entry comes from (None: measured).
    pub fn provenance_note(&self) -> Option<String> {
        self.is_predicted().then(|| {
            format!(
                "predicted, not measured: chosen by blockfp8's static model for {} (hip/README.md); `blockfp8 tune` on the device replaces it with measured entries",
                self.predicted_for().unwrap_or("an unnamed architecture")
            )
        })
    }

    /// The config with its K split fixed at `splits` (`SPLIT_K_KEY`).
    pub fn with_split_k(&self, splits: u32) -> KernelConfig {
        let mut c = self.clone();
        c.extra.insert(SPLIT_K_KEY.into(), splits.into());
        c
    }

    /// Compact label, e.g. `m64n128k128g32w4s2`, plus `i16` for the MFMA shape and `c2` for
    /// a cluster of two.
    pub fn short(&self) -> String {
        let mut s = format!("m{}n{}k{}g{}w{}", self.block_m, self.block_n, self.block_k, self.group_m, self.num_warps);
        if let Some(st) = self.num_stages {
            s += &format!("s{st}");
        }
        if let Some(i) = self.matrix_instr_nonkdim {
            s += &format!("i{i}");
        }
        if self.cluster() != 1 {
            s += &format!("c{}", self.cluster());
            if self.cluster_splits_k() {
                s += "k";
            }
        }
        s
    }
}
