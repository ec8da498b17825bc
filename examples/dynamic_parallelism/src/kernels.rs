//! The kernels of the CDP2 refinement (kernels/refine.cu), declared for Rust.

use cuda_graph::DevicePtr;
use device_launch::{DeviceExecArg, RawErrorSlot};

// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu); the declarations are private to this crate, whose launches pass counts
// no larger than the buffers they point into. `dp_refine_all` indexes `flags` only below
// `cells` (it returns first for a block past the last cell) and `v` / `out` only below
// `cells * points` (the point index is checked against `points` within the block's cell).
cuda_graph::kernels! {
    /// The CDP2 parent: a warp per cell; fire-and-forgets `dp_refine` for refined cells and
    /// tail-launches `dp_reduce`.
    pub(crate) unsafe fn dp_parent(
        v: DevicePtr<u32>,
        cells: u32,
        points: u32,
        refine: u32,
        threshold: u32,
        out: DevicePtr<u32>,
        flags: DevicePtr<u32>,
        cell_sums: DevicePtr<u64>,
        launched: DevicePtr<u32>,
        ran: DevicePtr<u32>,
        slot: DevicePtr<RawErrorSlot>,
    );
    /// The host-driven version's inspection (flags and coarse outputs, no launches).
    pub(crate) unsafe fn dp_inspect(
        v: DevicePtr<u32>,
        cells: u32,
        points: u32,
        refine: u32,
        threshold: u32,
        out: DevicePtr<u32>,
        flags: DevicePtr<u32>,
    );
    /// The host-driven baseline's refinement: one launch over every cell; blocks of
    /// unrefined cells exit at once; counts each refined cell in `ran`.
    pub(crate) unsafe fn dp_refine_all(
        v: DevicePtr<u32>,
        cells: u32,
        points: u32,
        refine: u32,
        flags: DevicePtr<u32>,
        out: DevicePtr<u32>,
        ran: DevicePtr<u32>,
    );
    /// The child: refined outputs of one cell; counts itself in `ran`.
    pub(crate) unsafe fn dp_refine(
        v: DevicePtr<u32>,
        n: u32,
        cell: u32,
        points: u32,
        refine: u32,
        out: DevicePtr<u32>,
        ran: DevicePtr<u32>,
    );
    /// The reduction: `cell_sums[c]` = sum of cell c's outputs (a block per cell).
    pub(crate) unsafe fn dp_reduce(out: DevicePtr<u32>, points: u32, cell_sums: DevicePtr<u64>);
    /// Post-processing node 1: the total of the cell sums.
    pub(crate) unsafe fn dp_post_total(cell_sums: DevicePtr<u64>, cells: u32, total: DevicePtr<u64>);
    /// Post-processing node 2: each cell's share in millionths; counts the graph's runs.
    pub(crate) unsafe fn dp_post_share(
        cell_sums: DevicePtr<u64>,
        cells: u32,
        total: DevicePtr<u64>,
        share: DevicePtr<u32>,
        runs: DevicePtr<u32>,
    );
    /// The launcher: fire-and-forgets the post-processing graph when any cell was refined.
    pub(crate) unsafe fn dp_dispatch(
        post: DeviceExecArg,
        flags: DevicePtr<u32>,
        cells: u32,
        dispatched: DevicePtr<u32>,
        slot: DevicePtr<RawErrorSlot>,
    );
}

/// The kernels declared here against their C++ parameter types (`check_types` needs no GPU:
/// it reads the signature functions cuda-build compiled next to the kernels).
#[cfg(test)]
mod kernel_declarations {
    use super::*;

    #[test]
    fn match_the_cpp_parameter_types() {
        chapter_common::assert_kernel_types! {
            dp_parent, dp_inspect, dp_refine, dp_refine_all, dp_reduce, dp_post_total,
            dp_post_share, dp_dispatch
        }
    }
}
