// Loading a cubin or fatbin is unsafe: the driver reads as far as the image's own headers say, so only the
// caller can promise a complete image made by NVIDIA's tools (SOUNDNESS.md, "Things of other code", item 4).
use cuda_graph::kernel::Module;

static IMAGE: &[u8] = include_bytes!("module_from_image_without_unsafe.rs");

fn main() -> cuda_graph::Result<()> {
    let module = Module::from_image(IMAGE)?;
    println!("{module:?}");
    Ok(())
}
