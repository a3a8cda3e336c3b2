//! Compiles `proto/shuangkou/v1/*.proto` and `proto/shengji/v1/*.proto` with protox (pure Rust, no system `protoc`), writes the
//! descriptor set for server reflection, and generates the tonic server and client code.

use std::path::PathBuf;

use prost::Message;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    // The web table's built assets are embedded (src/service/web.rs): a new bundle rebuilds.
    println!("cargo:rerun-if-changed=web/dist");
    let fds = protox::Compiler::new(["proto"])?
        .include_imports(true)
        .include_source_info(true)
        .open_files(["shuangkou/v1/shuangkou.proto", "shengji/v1/shengji.proto"])?
        .file_descriptor_set();
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("shuangkou_descriptor.bin"), fds.encode_to_vec())?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    Ok(())
}
