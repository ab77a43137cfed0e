//! Side-by-side benchmark tables (owned by the tuner/bench work).
