//! What the PyTorch twin (`torch_twin.py`) reads: the weights as raw little-endian f32
//! (`weights.bin`), a JSON header naming each tensor's shape and offset (`model.json`), and the
//! start tokens with the tokens every sequence must produce (`expected.json`).

use std::path::Path;

use serde_json::{json, Value};

use crate::model::{
    Model, ACT_SCALE, END, HIDDEN, LAYERS, TABLE_HALF, TABLE_LEN, TABLE_SCALE, VOCAB, WEIGHT_SCALE,
};
use crate::reference::Generation;

/// The weights file's name in the output folder.
pub const WEIGHTS_FILE: &str = "weights.bin";
/// The header's name.
pub const MODEL_FILE: &str = "model.json";
/// The expected tokens' name.
pub const EXPECTED_FILE: &str = "expected.json";

/// Every tensor of `model` in file order: name, shape, values.
pub fn tensors(model: &Model) -> Vec<(String, Vec<usize>, &[f32])> {
    let mut out: Vec<(String, Vec<usize>, &[f32])> =
        vec![("embedding".to_string(), vec![VOCAB, HIDDEN], &model.embedding)];
    for (index, layer) in model.layers.iter().enumerate() {
        for (name, values, shape) in [
            ("w_ih", &layer.w_ih, vec![3 * HIDDEN, HIDDEN]),
            ("b_ih", &layer.b_ih, vec![3 * HIDDEN]),
            ("w_hh", &layer.w_hh, vec![3 * HIDDEN, HIDDEN]),
            ("b_hh", &layer.b_hh, vec![3 * HIDDEN]),
        ] {
            out.push((format!("gru.{index}.{name}"), shape, values));
        }
    }
    out.push(("out.w".to_string(), vec![VOCAB, HIDDEN], &model.w_out));
    out.push(("out.b".to_string(), vec![VOCAB], &model.b_out));
    out.push(("table.sigmoid".to_string(), vec![TABLE_LEN], &model.sigmoid));
    out.push(("table.tanh".to_string(), vec![TABLE_LEN], &model.tanh));
    out
}

/// The weights as little-endian f32 bytes, and the header that describes them.
///
/// ```
/// let model = generation_loop::model::Model::generate(1, 0);
/// let (bytes, header) = generation_loop::export::weights(&model, 1, 0);
/// assert_eq!(header["tensors"][0]["name"], "embedding");
/// let total: u64 = header["tensors"].as_array().unwrap().iter().map(|t| t["len"].as_u64().unwrap()).sum();
/// assert_eq!(bytes.len() as u64, 4 * total);
/// ```
pub fn weights(model: &Model, seed: u64, end_bias: i32) -> (Vec<u8>, Value) {
    let mut bytes = Vec::new();
    let mut entries = Vec::new();
    for (name, shape, values) in tensors(model) {
        entries.push(json!({"name": name, "shape": shape, "offset": bytes.len() / 4, "len": values.len()}));
        for v in values {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    let header = json!({
        "format": "generation_loop weights, raw little-endian float32",
        "file": WEIGHTS_FILE,
        "hidden": HIDDEN,
        "vocab": VOCAB,
        "layers": LAYERS,
        "end_token": END,
        "act_scale": ACT_SCALE,
        "weight_scale": WEIGHT_SCALE,
        "table_scale": TABLE_SCALE,
        "table_half": TABLE_HALF,
        "seed": seed,
        "end_bias": end_bias,
        "tensors": entries,
    });
    (bytes, header)
}

/// The expected generation of the largest batch (smaller batches are its first sequences).
pub fn expected(starts: &[u32], reference: &Generation, batches: &[u32], max_len: u32) -> Value {
    let steps: serde_json::Map<String, Value> = batches
        .iter()
        .map(|&b| {
            let steps = reference.tokens[..b as usize].iter().map(Vec::len).max().unwrap_or(0);
            (b.to_string(), json!(steps))
        })
        .collect();
    json!({
        "max_len": max_len,
        "batches": batches,
        "starts": starts,
        "steps": steps,
        "tokens": reference.tokens,
        "probs": reference.probs,
    })
}

/// Writes `bytes` to `dir/name`, naming the file in the error.
pub fn write(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let path = dir.join(name);
    std::fs::write(&path, bytes).map_err(|e| format!("writing {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensors_follow_each_other_and_read_back() {
        let model = Model::generate(3, 10);
        let (bytes, header) = weights(&model, 3, 10);
        let entries = header["tensors"].as_array().unwrap();
        assert_eq!(entries.len(), 3 + 4 * LAYERS + 2);
        let mut next = 0;
        for entry in entries {
            assert_eq!(entry["offset"].as_u64().unwrap(), next);
            let shape: u64 = entry["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap()).product();
            assert_eq!(shape, entry["len"].as_u64().unwrap());
            next += shape;
        }
        // The end token's bias reads back from its place in the file.
        let out_b = entries.iter().find(|e| e["name"] == "out.b").unwrap();
        let at = 4 * (out_b["offset"].as_u64().unwrap() as usize + END as usize);
        let value = f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        assert_eq!(value, model.b_out[END as usize]);
    }
}
