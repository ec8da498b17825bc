//! SOUNDNESS.md, "The holes a review found", finding 7: host reads and writes (`to_vec`,
//! `copy_from_host`) run on the legacy default stream, unordered with work on non-blocking streams.
//! They race such work for values only: every element read is one the buffer held (old or new), a
//! write and a kernel leave each element to one of the two, and synchronizing the stream first
//! orders them.

mod graph_support;

use cuda_graph::DeviceBuffer;
use gpu_test_support::require_gpu;
use graph_support::{per_element, run, stream};
use test_kernels::spin_then_fill;

const N: u32 = 1 << 16;
/// About 10 ms on an H100: the host copies below land before, during or after the writes.
const SPIN_CYCLES: u64 = 20_000_000;

#[test]
fn host_copies_racing_a_non_blocking_kernel_see_and_leave_old_or_new_values_only() {
    require_gpu!();
    run(|| {
        let other = stream()?;
        let mut data = DeviceBuffer::from_slice(&vec![5u32; N as usize])?;
        spin_then_fill().launch(&other, per_element(N), (data.ptr(), N, SPIN_CYCLES, 9))?;
        let seen = data.to_vec()?; // not ordered with the kernel
        assert!(seen.iter().all(|&v| v == 5 || v == 9), "a read saw a value nobody wrote");
        other.synchronize()?;
        assert!(
            data.to_vec()?.iter().all(|&v| v == 9),
            "a read after the synchronize sees the kernel's writes"
        );

        spin_then_fill().launch(&other, per_element(N), (data.ptr(), N, SPIN_CYCLES, 11))?;
        data.copy_from_host(&vec![7u32; N as usize])?; // not ordered with the kernel either
        other.synchronize()?;
        assert!(
            data.to_vec()?.iter().all(|&v| v == 7 || v == 11),
            "a racing write left a value nobody wrote"
        );

        data.copy_from_host(&vec![3u32; N as usize])?; // ordered: the stream is idle
        spin_then_fill().launch(&other, per_element(N), (data.ptr(), N, 0, 13))?;
        other.synchronize()?;
        assert!(data.to_vec()?.iter().all(|&v| v == 13), "work queued after a host write runs after it");
        Ok(())
    });
}
