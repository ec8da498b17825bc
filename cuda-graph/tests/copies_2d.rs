//! 2-D copies on a real GPU: pitched buffers filled from and read into linear device and
//! pinned host memory, sub-rectangles between pitched buffers, as stream operations and as
//! graph memcpy nodes, each checked against the same copy done on the CPU; out-of-bounds
//! rectangles refused before CUDA sees them.

mod graph_support;

use cuda_graph::graph::{Graph, HostLaunch};
use cuda_graph::memory::{Extent2D, PitchedBuffer};
use cuda_graph::refusal::{Bounds, CopyBox};
use cuda_graph::{CudaError, DeviceBuffer, PinnedBuffer, Refusal};
use gpu_test_support::require_gpu;
use graph_support::{run, stream};

/// Distinct values so that a misplaced row or column shows.
fn values(len: usize, seed: u32) -> Vec<u32> {
    (0..len as u32).map(|i| i.wrapping_mul(2_654_435_761).wrapping_add(seed)).collect()
}

/// The CPU's copy of `extent` from `src` (rows `src_pitch` apart) at `from` into `dst`
/// (rows `dst_pitch` apart) at `at`.
fn cpu_copy(
    dst: &mut [u32], dst_pitch: usize, at: (usize, usize), src: &[u32], src_pitch: usize,
    from: (usize, usize), extent: Extent2D,
) {
    for row in 0..extent.height {
        let d = (at.1 + row) * dst_pitch + at.0;
        let s = (from.1 + row) * src_pitch + from.0;
        dst[d..d + extent.width].copy_from_slice(&src[s..s + extent.width]);
    }
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
fn linear_and_pinned_memory_round_trip_through_a_pitched_buffer() {
    require_gpu!();
    run(|| {
        let (width, height, pitch) = (37, 19, 45);
        let input = values(pitch * (height - 1) + width, 7);
        let stream = stream()?;
        let mut rows = PitchedBuffer::<u32>::zeroed(width, height)?;
        assert!(rows.pitch() >= width * 4);
        rows.copy_from_device_async(&DeviceBuffer::from_slice(&input)?, pitch, &stream)?;
        stream.synchronize()?;
        let mut packed = vec![0; width * height];
        let e = Extent2D { width, height };
        cpu_copy(&mut packed, width, (0, 0), &input, pitch, (0, 0), e);
        assert_eq!(rows.to_vec()?, packed);

        // Out through pinned memory with another pitch; the gaps keep their old values.
        let out_pitch = 40;
        let mut host = PinnedBuffer::from_slice(&vec![u32::MAX; out_pitch * height])?;
        rows.copy_to_pinned_async(&mut host, out_pitch, &stream)?;
        let mut expected = vec![u32::MAX; out_pitch * height];
        cpu_copy(&mut expected, out_pitch, (0, 0), &packed, width, (0, 0), e);
        assert_eq!(host.as_slice()?.to_vec(), expected);

        // Back in from pinned memory, and out to linear device memory.
        let mut again = PitchedBuffer::<u32>::zeroed(width, height)?;
        again.copy_from_pinned_async(&host, out_pitch, &stream)?;
        let mut linear = DeviceBuffer::<u32>::zeroed(width * height)?;
        again.copy_to_device_async(&mut linear, width, &stream)?;
        stream.synchronize()?;
        assert_eq!(linear.to_vec()?, packed);
        Ok(())
    });
}

#[test]
fn a_sub_rectangle_lands_where_the_cpu_puts_it() {
    require_gpu!();
    run(|| {
        let (w, h) = (50, 30);
        let stream = stream()?;
        let source = values(w * h, 3);
        let mut src = PitchedBuffer::<u32>::zeroed(w, h)?;
        src.copy_from_device_async(&DeviceBuffer::from_slice(&source)?, w, &stream)?;
        let mut dst = PitchedBuffer::<u32>::zeroed(w, h)?;
        let extent = Extent2D { width: 13, height: 11 };
        dst.copy_rect_from_async((37, 19), &src, (5, 2), extent, &stream)?;
        stream.synchronize()?;
        let mut expected = vec![0; w * h];
        cpu_copy(&mut expected, w, (37, 19), &source, w, (5, 2), extent);
        assert_eq!(dst.to_vec()?, expected);

        // One column or row too far on either side: refused, naming call and numbers.
        let err = dst.copy_rect_from_async((38, 19), &src, (5, 2), extent, &stream).unwrap_err();
        assert!(matches!(
            err,
            CudaError::InvalidArgument { call: "PitchedBuffer::copy_rect_from_async", .. }
        ));
        assert!(
            matches!(
                copy_box(&err),
                Some((
                    "destination",
                    CopyBox { origin: (38, 19, 0), extent: (13, 11, _), volume: (50, 30, _), flat: true }
                ))
            ),
            "{err}"
        );
        assert!(dst.copy_rect_from_async((0, 0), &src, (5, 20), extent, &stream).is_err());
        let short = DeviceBuffer::<u32>::zeroed(w * h - 1)?;
        let err = dst.copy_from_device_async(&short, w, &stream).unwrap_err();
        assert!(matches!(copy_box(&err), Some(("source", CopyBox { volume: (50, 29, _), .. }))), "{err}");
        assert!(dst.copy_from_device_async(&DeviceBuffer::zeroed(w * h)?, w - 1, &stream).is_err());
        stream.synchronize()?;
        assert_eq!(dst.to_vec()?, expected, "refused copies changed nothing");
        Ok(())
    });
}

#[test]
fn memcpy_2d_nodes_copy_rectangles_at_each_launch() {
    require_gpu!();
    run(|| {
        let (w, h, pitch) = (24, 9, 30);
        let source = values(pitch * h, 11);
        let linear_in = DeviceBuffer::from_slice(&source)?;
        let (a, b) = (PitchedBuffer::<u32>::zeroed(w, h)?, PitchedBuffer::<u32>::zeroed(w, h)?);
        let linear_out = DeviceBuffer::<u32>::zeroed(w * h)?;
        let extent = Extent2D { width: 10, height: 4 };
        let graph = Graph::new()?;
        let load = graph.add_memcpy_2d_from_linear(&a, &linear_in.ptr(), pitch, &[])?;
        let shift = graph.add_memcpy_2d(&b, (14, 5), &a, (3, 1), extent, &[&load])?;
        graph.add_memcpy_2d_to_linear(&linear_out.ptr(), w, &b, &[&shift])?;
        let refused = graph.add_memcpy_2d(&b, (15, 5), &a, (3, 1), extent, &[]).unwrap_err();
        assert!(matches!(refused, CudaError::InvalidArgument { call: "GraphBuilder::add_memcpy_2d", .. }));
        assert!(
            matches!(copy_box(&refused), Some(("destination", CopyBox { origin: (15, 5, 0), .. }))),
            "{refused}"
        );
        let empty = Extent2D { width: 0, height: 4 };
        assert!(graph.add_memcpy_2d(&b, (0, 0), &a, (0, 0), empty, &[]).is_err());

        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        let stream = stream()?;
        exec.launch(&stream)?;
        stream.synchronize()?;
        let mut packed = vec![0; w * h];
        cpu_copy(&mut packed, w, (0, 0), &source, pitch, (0, 0), Extent2D { width: w, height: h });
        let mut expected = vec![0; w * h];
        cpu_copy(&mut expected, w, (14, 5), &packed, w, (3, 1), extent);
        assert_eq!(a.to_vec()?, packed);
        assert_eq!(linear_out.to_vec()?, expected);
        Ok(())
    });
}
