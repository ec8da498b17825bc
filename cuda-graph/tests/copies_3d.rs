//! 3-D copies on a real GPU: pitched volumes filled from and read into host slices, linear
//! device and pinned host memory, sub-boxes between volumes, as stream operations and as
//! graph memcpy nodes launched twice, each checked against the same copy done on the CPU;
//! out-of-bounds boxes refused before CUDA sees them.

mod graph_support;

use cuda_graph::graph::{Graph, HostLaunch};
use cuda_graph::memory::{Extent3D, PitchedVolume};
use cuda_graph::refusal::{Bounds, CopyBox};
use cuda_graph::{CudaError, DeviceBuffer, PinnedBuffer, Refusal};
use gpu_test_support::require_gpu;
use graph_support::{run, stream};

/// Distinct values so that a misplaced row, column or slice shows.
fn values(len: usize, seed: u32) -> Vec<u32> {
    (0..len as u32).map(|i| i.wrapping_mul(2_654_435_761).wrapping_add(seed)).collect()
}

/// Linear memory as slices of `rows` rows of `pitch` elements.
#[derive(Clone, Copy)]
struct Layout {
    pitch: usize,
    rows: usize,
}

impl Layout {
    fn index(self, (x, y, z): (usize, usize, usize)) -> usize {
        (z * self.rows + y) * self.pitch + x
    }
}

/// The CPU's copy of the box `extent` from `src` at `from` into `dst` at `at`.
fn cpu_copy(
    dst: &mut [u32], dst_layout: Layout, at: (usize, usize, usize), src: &[u32], src_layout: Layout,
    from: (usize, usize, usize), extent: Extent3D,
) {
    for z in 0..extent.depth {
        for y in 0..extent.height {
            let d = dst_layout.index((at.0, at.1 + y, at.2 + z));
            let s = src_layout.index((from.0, from.1 + y, from.2 + z));
            dst[d..d + extent.width].copy_from_slice(&src[s..s + extent.width]);
        }
    }
}

fn packed(extent: Extent3D) -> Layout {
    Layout { pitch: extent.width, rows: extent.height }
}

/// The bounds a refusal names, if it is one of a count, offset or box out of bounds.
fn bounds(err: &CudaError) -> Option<&Bounds> {
    match err.refusal() {
        Some(Refusal::OutOfBounds(bounds)) => Some(bounds),
        _ => None,
    }
}

/// The side and box a refusal names, if it is one of a copy's box out of bounds.
fn copy_box(err: &CudaError) -> Option<(&'static str, CopyBox)> {
    match bounds(err) {
        Some(Bounds::CopyBox { side, geometry }) => Some((side, **geometry)),
        _ => None,
    }
}

#[test]
fn linear_and_pinned_memory_round_trip_through_a_pitched_volume() {
    require_gpu!();
    run(|| {
        let extent = Extent3D { width: 37, height: 11, depth: 5 };
        let input_layout = Layout { pitch: 41, rows: 13 };
        // The last slice only as long as its used rows: the tightest source accepted.
        let len = input_layout.index((0, extent.height - 1, extent.depth - 1)) + extent.width;
        let input = values(len, 7);
        let stream = stream()?;
        let mut volume = PitchedVolume::<u32>::zeroed(extent)?;
        assert!(volume.pitch() >= extent.width * 4);
        volume.copy_from_device_async(&DeviceBuffer::from_slice(&input)?, 41, 13, &stream)?;
        stream.synchronize()?;
        let mut expected = vec![0; extent.elements().unwrap()];
        cpu_copy(&mut expected, packed(extent), (0, 0, 0), &input, input_layout, (0, 0, 0), extent);
        assert_eq!(volume.to_vec()?, expected);

        // Out through pinned memory with another layout; the gaps keep their old values.
        let out_layout = Layout { pitch: 40, rows: 12 };
        let out_len = out_layout.index((0, 0, extent.depth));
        let mut host = PinnedBuffer::from_slice(&vec![u32::MAX; out_len])?;
        volume.copy_to_pinned_async(&mut host, 40, 12, &stream)?;
        let mut through_host = vec![u32::MAX; out_len];
        cpu_copy(&mut through_host, out_layout, (0, 0, 0), &expected, packed(extent), (0, 0, 0), extent);
        assert_eq!(host.as_slice()?.to_vec(), through_host);

        // Back in from pinned memory, out to linear device memory, and the host slice path.
        let mut again = PitchedVolume::<u32>::zeroed(extent)?;
        again.copy_from_pinned_async(&host, 40, 12, &stream)?;
        let mut linear = DeviceBuffer::<u32>::zeroed(extent.elements().unwrap())?;
        again.copy_to_device_async(&mut linear, extent.width, extent.height, &stream)?;
        stream.synchronize()?;
        assert_eq!(linear.to_vec()?, expected);
        assert_eq!(PitchedVolume::from_slice(extent, &expected)?.to_vec()?, expected);
        Ok(())
    });
}

#[test]
fn a_sub_box_lands_where_the_cpu_puts_it_and_out_of_bounds_boxes_are_refused() {
    require_gpu!();
    run(|| {
        let whole = Extent3D { width: 30, height: 20, depth: 10 };
        let stream = stream()?;
        let source = values(whole.elements().unwrap(), 3);
        let src = PitchedVolume::from_slice(whole, &source)?;
        let mut dst = PitchedVolume::<u32>::zeroed(whole)?;
        let extent = Extent3D { width: 13, height: 11, depth: 4 };
        dst.copy_box_from_async((17, 9, 6), &src, (5, 2, 1), extent, &stream)?;
        stream.synchronize()?;
        let mut expected = vec![0; whole.elements().unwrap()];
        cpu_copy(&mut expected, packed(whole), (17, 9, 6), &source, packed(whole), (5, 2, 1), extent);
        assert_eq!(dst.to_vec()?, expected);

        // One column, row or slice too far on either side: refused, naming call and numbers.
        let err = dst.copy_box_from_async((18, 9, 6), &src, (5, 2, 1), extent, &stream).unwrap_err();
        assert!(matches!(err, CudaError::InvalidArgument { call: "PitchedVolume::copy_box_from_async", .. }));
        let too_far = CopyBox { origin: (18, 9, 6), extent: (13, 11, 4), volume: (30, 20, 10), flat: false };
        assert_eq!(copy_box(&err), Some(("destination", too_far)), "{err}");
        assert!(
            err.to_string()
                .ends_with("a 13x11x4 box at (18, 9, 6) does not fit the destination of 30x20x10 elements"),
            "the text users read: {err}"
        );
        assert!(dst.copy_box_from_async((17, 10, 6), &src, (5, 2, 1), extent, &stream).is_err());
        assert!(dst.copy_box_from_async((17, 9, 7), &src, (5, 2, 1), extent, &stream).is_err());
        let err = dst.copy_box_from_async((0, 0, 0), &src, (5, 2, 7), extent, &stream).unwrap_err();
        assert!(matches!(copy_box(&err), Some(("source", CopyBox { volume: (30, 20, 10), .. }))), "{err}");
        let tight = 9 * 20 * 30 + 19 * 30 + 30; // a packed volume: the last slice ends the memory
        let short = DeviceBuffer::<u32>::zeroed(tight - 1)?;
        let err = dst.copy_from_device_async(&short, 30, 20, &stream).unwrap_err();
        assert!(matches!(copy_box(&err), Some(("source", CopyBox { volume: (30, 20, 9), .. }))), "{err}");
        let err = dst.copy_from_device_async(&DeviceBuffer::zeroed(tight)?, 30, 19, &stream).unwrap_err();
        let slices = Bounds::SliceRows { side: "source", height: 20, slice_rows: 19 };
        assert_eq!(bounds(&err), Some(&slices), "{err}");
        assert!(dst.copy_from_device_async(&DeviceBuffer::zeroed(tight)?, 29, 20, &stream).is_err());
        let mut pinned = PinnedBuffer::<u32>::zeroed(tight - 1)?;
        assert!(dst.copy_to_pinned_async(&mut pinned, 30, 20, &stream).is_err());
        assert!(PitchedVolume::from_slice(whole, &source[1..]).is_err());
        stream.synchronize()?;
        assert_eq!(dst.to_vec()?, expected, "refused copies changed nothing");
        Ok(())
    });
}

#[test]
fn memcpy_3d_nodes_copy_boxes_at_each_launch() {
    require_gpu!();
    run(|| {
        let whole = Extent3D { width: 24, height: 9, depth: 6 };
        let in_layout = Layout { pitch: 30, rows: 10 };
        let source = values(in_layout.index((0, 0, whole.depth)), 11);
        let linear_in = DeviceBuffer::from_slice(&source)?;
        let (a, b) = (PitchedVolume::<u32>::zeroed(whole)?, PitchedVolume::<u32>::zeroed(whole)?);
        let mut linear_out = DeviceBuffer::<u32>::zeroed(whole.elements().unwrap())?;
        let extent = Extent3D { width: 10, height: 4, depth: 3 };
        let graph = Graph::new()?;
        let load = graph.add_memcpy_3d_from_linear(&a, &linear_in.ptr(), 30, 10, &[])?;
        let shift = graph.add_memcpy_3d(&b, (14, 5, 3), &a, (3, 1, 2), extent, &[&load])?;
        graph.add_memcpy_3d_to_linear(&linear_out.ptr(), whole.width, whole.height, &b, &[&shift])?;
        let refused = graph.add_memcpy_3d(&b, (14, 5, 4), &a, (3, 1, 2), extent, &[]).unwrap_err();
        assert!(matches!(refused, CudaError::InvalidArgument { call: "GraphBuilder::add_memcpy_3d", .. }));
        assert!(
            matches!(copy_box(&refused), Some(("destination", CopyBox { origin: (14, 5, 4), .. }))),
            "{refused}"
        );
        let empty = Extent3D { depth: 0, ..extent };
        assert!(graph.add_memcpy_3d(&b, (0, 0, 0), &a, (0, 0, 0), empty, &[]).is_err());
        let short = DeviceBuffer::<u32>::zeroed(whole.elements().unwrap() - 1)?;
        assert!(graph.add_memcpy_3d_to_linear(&short.ptr(), whole.width, whole.height, &b, &[]).is_err());

        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        let stream = stream()?;
        let mut packed_a = vec![0; whole.elements().unwrap()];
        cpu_copy(&mut packed_a, packed(whole), (0, 0, 0), &source, in_layout, (0, 0, 0), whole);
        let mut expected = vec![0; whole.elements().unwrap()];
        cpu_copy(&mut expected, packed(whole), (14, 5, 3), &packed_a, packed(whole), (3, 1, 2), extent);
        for launch in 0..2 {
            exec.launch(&stream)?;
            stream.synchronize()?;
            assert_eq!(a.to_vec()?, packed_a, "launch {launch}");
            assert_eq!(linear_out.to_vec()?, expected, "launch {launch}");
            // Cleared between launches: the second launch must copy again.
            linear_out.copy_from_host(&vec![0; whole.elements().unwrap()])?;
        }
        Ok(())
    });
}
