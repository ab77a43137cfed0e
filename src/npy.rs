//! NumPy .npy reading and writing for the CLI.
