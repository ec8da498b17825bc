// Mapped memory is read by the host with one atomic access per element while the device may
// write it: only 32- and 64-bit integers and floats (`MappedWord`) may live there. Bytes,
// arrays and plain-data structs, which would need several accesses or none exist, do not.
use cuda_graph::MappedBuffer;

fn main() -> Result<(), cuda_graph::CudaError> {
    let bytes = MappedBuffer::<u8>::zeroed(16)?;
    let pairs = MappedBuffer::<[u32; 2]>::zeroed(4)?;
    let _ = (bytes.load(0), pairs.len());
    Ok(())
}
