//! Renders include/biren_runtime.h with cbindgen and fails the build when the committed header
//! is stale. `BIREN_UPDATE_HEADER=1 cargo build` (or `make header`) rewrites it.

use std::path::PathBuf;

fn main() {
    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let header = crate_dir.join("include/biren_runtime.h");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=include/biren_runtime.h");
    println!("cargo:rerun-if-env-changed=BIREN_UPDATE_HEADER");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libbiren_runtime.so.1");

    let config =
        cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen could not render the header");
    let mut rendered = Vec::new();
    bindings.write(&mut rendered);
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("biren_runtime.h");
    std::fs::write(&out, &rendered).unwrap();

    let committed = std::fs::read(&header).unwrap_or_default();
    if committed != rendered {
        if std::env::var("BIREN_UPDATE_HEADER").as_deref() == Ok("1") {
            std::fs::create_dir_all(header.parent().unwrap()).unwrap();
            std::fs::write(&header, &rendered).unwrap();
        } else {
            panic!(
                "include/biren_runtime.h is stale: the exports or their docs changed. \
                 Run `make header` (BIREN_UPDATE_HEADER=1 cargo build) and commit it. Fresh copy: {}",
                out.display()
            );
        }
    }
}
