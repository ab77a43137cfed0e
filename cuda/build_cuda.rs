pub fn build(out_dir: &std::path::Path) {
    let _ = out_dir;
}
