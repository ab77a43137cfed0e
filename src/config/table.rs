//! One config file: batch size M -> KernelConfig, with the nearest-M rule.

use super::KernelConfig;

#[derive(Clone, Debug, PartialEq)]
pub struct ConfigTable {
    /// Ascending by M.
    pub entries: Vec<(usize, KernelConfig)>,
}

impl ConfigTable {
    /// The entry whose key is nearest to `m`; a tie goes to the smaller key.
    pub fn nearest(&self, m: usize) -> Option<(usize, &KernelConfig)> {
        let _ = m;
        todo!("H2")
    }
}
