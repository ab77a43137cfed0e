//! Which (N, K) weight shapes to tune: a built-in preset, a Hugging Face `config.json`, or
//! explicit `N,K` pairs. Shapes are per GPU: column-parallel layers split N by the
//! tensor-parallel size, row-parallel layers split K, replicated layers keep both.

use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};

const OP: &str = "tune shapes";

pub use crate::config::DEFAULT_BLOCK;

/// One weight matrix shape [N, K] as one GPU holds it, with its scale block and the layers
/// that have it (for reports; empty for explicit shapes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WeightShape {
    pub n: usize,
    pub k: usize,
    /// (block_n, block_k) of the weight scales.
    pub block: (usize, usize),
    pub layers: Vec<String>,
}

impl WeightShape {
    pub fn new(n: usize, k: usize, block: (usize, usize)) -> Self {
        WeightShape { n, k, block, layers: Vec::new() }
    }
    /// The identity used for dedupe, file names and journal keys.
    pub fn key(&self) -> (usize, usize, (usize, usize)) {
        (self.n, self.k, self.block)
    }
}

/// How a linear layer is split across tensor-parallel ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Split {
    /// Every rank holds the whole weight.
    Replicated,
    /// Output features (N) divided by tp.
    Column,
    /// Input features (K) divided by tp.
    Row,
}

/// Adds `(n, k)` split by `tp`, merging layer names into an existing equal shape.
fn push_layer(out: &mut Vec<WeightShape>, layer: &str, n: usize, k: usize, split: Split, tp: usize, block: (usize, usize)) -> Result<()> {
    let (n, k) = match split {
        Split::Replicated => (n, k),
        Split::Column => (divide(layer, "N", n, tp)?, k),
        Split::Row => (n, divide(layer, "K", k, tp)?),
    };
    if n == 0 || k == 0 {
        return Err(Error::invalid(OP, format!("layer {layer} has an empty weight ({n} x {k})")));
    }
    match out.iter_mut().find(|s| s.key() == (n, k, block)) {
        Some(s) => {
            if !s.layers.iter().any(|l| l == layer) {
                s.layers.push(layer.to_string());
            }
        }
        None => out.push(WeightShape { n, k, block, layers: vec![layer.to_string()] }),
    }
    Ok(())
}

fn divide(layer: &str, what: &str, size: usize, tp: usize) -> Result<usize> {
    if size % tp != 0 {
        return Err(Error::invalid(OP, format!("layer {layer}: {what}={size} is not divisible by the tensor-parallel size {tp}")));
    }
    Ok(size / tp)
}

fn check_tp(tp: usize) -> Result<()> {
    if tp == 0 {
        return Err(Error::invalid(OP, "tensor-parallel size must be >= 1"));
    }
    Ok(())
}

/// Names accepted by [`preset_shapes`].
pub const PRESETS: &[&str] = &["deepseek-v3"];

/// The DeepSeek-V3 list that vLLM's and SGLang's block-FP8 tuners hard-code:
/// shapes that are never split (attention run data-parallel), N split by tp, K split by tp.
/// It covers both attention layouts (with and without q LoRA) and so holds a few shapes
/// that one checkpoint does not use; [`shapes_from_model_config`] derives the exact set.
pub fn preset_shapes(name: &str, tp: usize) -> Result<Vec<WeightShape>> {
    check_tp(tp)?;
    let key = name.to_ascii_lowercase().replace('_', "-");
    if !matches!(key.as_str(), "deepseek-v3" | "deepseek-r1" | "deepseek-v3.1") {
        return Err(Error::invalid(OP, format!("unknown model preset {name:?} (known: {}); use a config.json for other models", PRESETS.join(", "))));
    }
    let b = DEFAULT_BLOCK;
    let mut out = Vec::new();
    let not_split = [(576, 7168), (2112, 7168), (24576, 7168), (32768, 512), (7168, 16384), (7168, 18432)];
    let n_split = [(36864, 7168), (24576, 7168), (32768, 512), (24576, 1536), (12288, 7168), (4096, 7168)];
    let k_split = [(7168, 18432), (7168, 16384), (7168, 2048)];
    for (n, k) in not_split {
        push_layer(&mut out, "preset (not split)", n, k, Split::Replicated, tp, b)?;
    }
    for (n, k) in n_split {
        push_layer(&mut out, "preset (N split)", n, k, Split::Column, tp, b)?;
    }
    for (n, k) in k_split {
        push_layer(&mut out, "preset (K split)", n, k, Split::Row, tp, b)?;
    }
    Ok(out)
}

/// Parses `N,K` (also `NxK`), with an optional block: `N,K,BN,BK`.
pub fn parse_shape(s: &str) -> Result<WeightShape> {
    let parts: Vec<&str> = s.split([',', 'x', 'X']).map(str::trim).collect();
    let nums: std::result::Result<Vec<usize>, _> = parts.iter().map(|p| p.parse::<usize>()).collect();
    let bad = || Error::invalid(OP, format!("shape {s:?}: expected N,K or N,K,BLOCK_N,BLOCK_K with positive integers"));
    let nums = nums.map_err(|_| bad())?;
    let shape = match nums.as_slice() {
        [n, k] => WeightShape::new(*n, *k, DEFAULT_BLOCK),
        [n, k, bn, bk] => WeightShape::new(*n, *k, (*bn, *bk)),
        _ => return Err(bad()),
    };
    if shape.n == 0 || shape.k == 0 || shape.block.0 == 0 || shape.block.1 == 0 {
        return Err(bad());
    }
    Ok(shape)
}

/// Reads a Hugging Face `config.json` and derives [`shapes_from_model_json`].
pub fn shapes_from_model_config(path: &Path, tp: usize) -> Result<Vec<WeightShape>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(format!("reading model config {}", path.display()), e))?;
    let json: Value = serde_json::from_str(&text).map_err(|e| Error::Config { path: path.to_path_buf(), reason: format!("not valid JSON: {e}") })?;
    shapes_from_model_json(&json, tp).map_err(|e| match e {
        Error::InvalidArgument { what, .. } => Error::Config { path: path.to_path_buf(), reason: what },
        other => other,
    })
}

/// Reads an integer field, `None` when absent or null.
fn field(cfg: &Value, name: &str) -> Result<Option<usize>> {
    match cfg.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(|x| Some(x as usize))
            .ok_or_else(|| Error::invalid(OP, format!("field {name:?} is {v}, expected a non-negative integer"))),
    }
}

fn required(cfg: &Value, name: &str) -> Result<usize> {
    field(cfg, name)?.ok_or_else(|| Error::invalid(OP, format!("model config has no {name:?}")))
}

/// The weight block of a block-quantized FP8 checkpoint, or a clear error.
fn weight_block(cfg: &Value) -> Result<(usize, usize)> {
    let Some(q) = cfg.get("quantization_config") else {
        return Err(Error::invalid(OP, "model config has no quantization_config: not a block-quantized FP8 checkpoint"));
    };
    let method = q.get("quant_method").and_then(Value::as_str).unwrap_or("");
    if method != "fp8" {
        return Err(Error::invalid(OP, format!("quantization_config.quant_method is {method:?}; only block-quantized \"fp8\" checkpoints are supported")));
    }
    let block = q.get("weight_block_size").and_then(Value::as_array);
    match block.map(|b| b.iter().map(Value::as_u64).collect::<Vec<_>>()).as_deref() {
        Some([Some(bn), Some(bk)]) if *bn > 0 && *bk > 0 => Ok((*bn as usize, *bk as usize)),
        _ => Err(Error::invalid(
            OP,
            "quantization_config.weight_block_size is missing or not [block_n, block_k]: a per-tensor/per-channel FP8 checkpoint, not block-quantized",
        )),
    }
}

/// Every block-quantized linear layer's per-GPU (N, K), deduplicated, in layer order.
///
/// Attention: MLA (DeepSeek: `kv_lora_rank` present) or grouped-query (Llama/Qwen: q, k,
/// v heads fused into one column-parallel qkv_proj; k/v heads are replicated when
/// tp > num_key_value_heads). MLP: dense gate_up (column, 2 x intermediate) and down
/// (row) where the model has dense MLP layers; MoE experts as the dense shapes of one
/// expert and of the shared experts (moe_intermediate_size split by tp, as vLLM's
/// tensor-parallel MoE does). DeepSeek-V3.2's indexer projections are included when present.
/// Layers that checkpoints keep unquantized (embeddings, lm_head, the MoE router) are left out.
pub fn shapes_from_model_json(cfg: &Value, tp: usize) -> Result<Vec<WeightShape>> {
    check_tp(tp)?;
    let block = weight_block(cfg)?;
    let hidden = required(cfg, "hidden_size")?;
    let heads = required(cfg, "num_attention_heads")?;
    let mut out = Vec::new();
    let push = |out: &mut Vec<WeightShape>, layer: &str, n: usize, k: usize, split: Split| push_layer(out, layer, n, k, split, tp, block);

    // Attention.
    if let Some(kv_lora) = field(cfg, "kv_lora_rank")? {
        let nope = required(cfg, "qk_nope_head_dim")?;
        let rope = required(cfg, "qk_rope_head_dim")?;
        let v_dim = required(cfg, "v_head_dim")?;
        let q_head = nope + rope;
        match field(cfg, "q_lora_rank")? {
            Some(q_lora) => {
                // vLLM fuses q_a_proj and kv_a_proj_with_mqa into one replicated GEMM.
                push(&mut out, "self_attn.fused_qkv_a_proj", q_lora + kv_lora + rope, hidden, Split::Replicated)?;
                push(&mut out, "self_attn.q_b_proj", heads * q_head, q_lora, Split::Column)?;
            }
            None => {
                push(&mut out, "self_attn.kv_a_proj_with_mqa", kv_lora + rope, hidden, Split::Replicated)?;
                push(&mut out, "self_attn.q_proj", heads * q_head, hidden, Split::Column)?;
            }
        }
        push(&mut out, "self_attn.kv_b_proj", heads * (nope + v_dim), kv_lora, Split::Column)?;
        push(&mut out, "self_attn.o_proj", hidden, heads * v_dim, Split::Row)?;
        if let (Some(idx_heads), Some(idx_dim)) = (field(cfg, "index_n_heads")?, field(cfg, "index_head_dim")?) {
            if let Some(q_lora) = field(cfg, "q_lora_rank")? {
                push(&mut out, "self_attn.indexer.wq_b", idx_heads * idx_dim, q_lora, Split::Replicated)?;
            }
            push(&mut out, "self_attn.indexer.wk", idx_dim, hidden, Split::Replicated)?;
        }
    } else {
        let head_dim = match field(cfg, "head_dim")? {
            Some(d) => d,
            None => {
                if hidden % heads != 0 {
                    return Err(Error::invalid(OP, format!("no head_dim and hidden_size {hidden} is not a multiple of num_attention_heads {heads}")));
                }
                hidden / heads
            }
        };
        let kv_heads = field(cfg, "num_key_value_heads")?.unwrap_or(heads);
        let q_per_rank = divide("self_attn.qkv_proj", "num_attention_heads", heads, tp)?;
        // With more ranks than k/v heads, each rank keeps one replicated k/v head.
        let kv_per_rank = if tp >= kv_heads { 1 } else { divide("self_attn.qkv_proj", "num_key_value_heads", kv_heads, tp)? };
        push(&mut out, "self_attn.qkv_proj", (q_per_rank + 2 * kv_per_rank) * head_dim, hidden, Split::Replicated)?;
        push(&mut out, "self_attn.o_proj", hidden, heads * head_dim, Split::Row)?;
    }

    // MLP: dense layers, routed experts, shared experts.
    let experts = field(cfg, "n_routed_experts")?.or(field(cfg, "num_experts")?).unwrap_or(0);
    let first_dense = field(cfg, "first_k_dense_replace")?.unwrap_or(0);
    let sparse_step = field(cfg, "decoder_sparse_step")?.unwrap_or(1);
    let mlp_only = cfg.get("mlp_only_layers").and_then(Value::as_array).is_some_and(|a| !a.is_empty());
    let has_dense_mlp = experts == 0 || first_dense > 0 || mlp_only || sparse_step > 1;
    if has_dense_mlp {
        let inter = required(cfg, "intermediate_size")?;
        push(&mut out, "mlp.gate_up_proj", 2 * inter, hidden, Split::Column)?;
        push(&mut out, "mlp.down_proj", hidden, inter, Split::Row)?;
    }
    if experts > 0 {
        let moe_inter = required(cfg, "moe_intermediate_size")?;
        push(&mut out, "mlp.experts.gate_up_proj (one expert)", 2 * moe_inter, hidden, Split::Column)?;
        push(&mut out, "mlp.experts.down_proj (one expert)", hidden, moe_inter, Split::Row)?;
        let shared_inter = match (field(cfg, "n_shared_experts")?, field(cfg, "shared_expert_intermediate_size")?) {
            (Some(n), _) if n > 0 => Some(n * moe_inter),
            (_, Some(s)) if s > 0 => Some(s),
            _ => None,
        };
        if let Some(s) = shared_inter {
            push(&mut out, "mlp.shared_experts.gate_up_proj", 2 * s, hidden, Split::Column)?;
            push(&mut out, "mlp.shared_experts.down_proj", hidden, s, Split::Row)?;
        }
    }
    for s in &out {
        if s.n % block.0 != 0 || s.k % block.1 != 0 {
            log::warn!("shape N={} K={} ({}) is not a multiple of the weight block {:?}", s.n, s.k, s.layers.join(", "), block);
        }
    }
    Ok(out)
}

/// Removes repeated shapes (same N, K, block), keeping the first and merging layer names.
pub fn dedupe(shapes: Vec<WeightShape>) -> Vec<WeightShape> {
    let mut out: Vec<WeightShape> = Vec::new();
    for s in shapes {
        match out.iter_mut().find(|o| o.key() == s.key()) {
            Some(o) => {
                for l in s.layers {
                    if !o.layers.contains(&l) {
                        o.layers.push(l);
                    }
                }
            }
            None => out.push(s),
        }
    }
    out
}

/// A shape's line in a listing: its `--shape` argument (`N,K`, or `N,K,BLOCK_N,BLOCK_K` for a
/// block other than 128x128), a tab, and the layers that have it (`-` for explicit shapes).
pub fn shape_line(s: &WeightShape) -> String {
    let layers = if s.layers.is_empty() { "-".to_string() } else { s.layers.join(", ") };
    format!("{}\t{layers}", crate::config::shape_arg(s.n, s.k, s.block))
}

/// Where a command's shapes come from; every source given contributes (in this order:
/// preset, model config, explicit), and the union is deduplicated.
#[derive(Clone, Debug, Default)]
pub struct ShapeSpec {
    /// A preset name (`deepseek-v3`), see [`PRESETS`].
    pub preset: Option<String>,
    /// A Hugging Face `config.json` of a block-quantized FP8 checkpoint.
    pub model_config: Option<std::path::PathBuf>,
    /// Tensor-parallel size for the preset and the model config (1 when unset).
    pub tp_size: Option<usize>,
    /// Explicit `N,K` (or `N,K,BLOCK_N,BLOCK_K`) strings.
    pub shapes: Vec<String>,
}

impl ShapeSpec {
    /// The shapes, or an error when no source was given or a source is invalid.
    pub fn resolve(&self) -> Result<Vec<WeightShape>> {
        let tp = self.tp_size.unwrap_or(1);
        let mut out = Vec::new();
        if let Some(p) = &self.preset {
            out.extend(preset_shapes(p, tp)?);
        }
        if let Some(path) = &self.model_config {
            out.extend(shapes_from_model_config(path, tp)?);
        }
        for s in &self.shapes {
            out.push(parse_shape(s)?);
        }
        if out.is_empty() {
            return Err(Error::invalid(OP, "no shapes: give a model preset, a model config.json or explicit N,K shapes"));
        }
        Ok(dedupe(out))
    }
}
