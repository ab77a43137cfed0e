//! The tuner (owned by the tuner/bench work).
