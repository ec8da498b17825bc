// NVRTC's output loads from safe code because only NVRTC makes it: a `Compiled` cannot be built,
// or its image changed, by other code (SOUNDNESS.md, "Things of other code", item 4).
use cuda_graph::kernel::nvrtc::{Compiled, Output};

fn main() -> cuda_graph::Result<()> {
    let forged = Compiled { image: b"\x7fELF".to_vec(), output: Output::Cubin, log: String::new() };
    let module = forged.load()?;
    println!("{module:?}");
    Ok(())
}
