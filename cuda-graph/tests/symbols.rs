//! Copies to and from `__device__` variables on a real GPU: variables of this program
//! (`device_symbols!`, tests/test-kernels) written and read back, read by a kernel, written
//! by a kernel, copied by stream operations and by graph memcpy nodes launched twice; a
//! module's global (`Module::symbol`); declarations of the wrong size and out-of-range
//! copies refused before CUDA copies anything.

mod graph_support;

use cuda_graph::graph::{Graph, HostLaunch};
use cuda_graph::kernel::Module;
use cuda_graph::refusal::Bounds;
use cuda_graph::{CudaError, DeviceBuffer, PinnedBuffer, Refusal};
use gpu_test_support::require_gpu;
use graph_support::{one, per_element, run, stream};
use test_kernels::{add_symbol_table, bump_symbol_offset, symbol_offset, symbol_table};

/// The same variables declared with the wrong sizes.
mod wrong {
    cuda_graph::device_symbols! {
        pub static symbol_table: [u32; 15];
        pub static symbol_offset: u64;
    }
}

/// What `add_symbol_table` writes for `table` and `offset`.
fn expected(table: &[u32; 16], offset: u32, n: usize) -> Vec<u32> {
    (0..n).map(|i| table[i % 16].wrapping_add(offset)).collect()
}

// One test touches the program's variables, so parallel tests do not race on them.
#[test]
fn program_variables_are_written_read_by_kernels_and_copied_by_streams_and_nodes() {
    require_gpu!();
    run(|| {
        let table: [u32; 16] = std::array::from_fn(|i| (i as u32 + 1) * 1000);
        symbol_table().write(0, &table)?;
        symbol_offset().write(0, &[7])?;
        assert_eq!(symbol_table().to_vec()?, table);
        let mut middle = [0u32; 4];
        symbol_table().read(5, &mut middle)?;
        assert_eq!(middle, table[5..9]);

        // A kernel reads both variables, another writes one.
        let stream = stream()?;
        let n = 40;
        let out = DeviceBuffer::<u32>::zeroed(n)?;
        add_symbol_table().launch(&stream, per_element(n as u32), (out.ptr(), n as u32))?;
        stream.synchronize()?;
        assert_eq!(out.to_vec()?, expected(&table, 7, n));
        bump_symbol_offset().launch(&stream, one(), (5,))?;
        stream.synchronize()?;
        assert_eq!(symbol_offset().to_vec()?, [12]);

        // Stream copies: device buffers and pinned memory, at offsets.
        let mut table = table;
        symbol_table().copy_from_device_async(12, &DeviceBuffer::from_slice(&[1u32, 2, 3, 4])?, &stream)?;
        table[12..].copy_from_slice(&[1, 2, 3, 4]);
        symbol_table().copy_from_pinned_async(0, &PinnedBuffer::from_slice(&[9u32, 8])?, &stream)?;
        table[..2].copy_from_slice(&[9, 8]);
        let mut back = DeviceBuffer::<u32>::zeroed(16)?;
        symbol_table().copy_to_device_async(0, &mut back, &stream)?;
        let mut tail = PinnedBuffer::<u32>::zeroed(3)?;
        symbol_table().copy_to_pinned_async(13, &mut tail, &stream)?;
        assert_eq!(tail.as_slice()?, table[13..]);
        stream.synchronize()?;
        assert_eq!(back.to_vec()?, table);

        // Out of range and wrong sizes: refused, nothing copied.
        let four = DeviceBuffer::from_slice(&[0u32; 4])?;
        let err = symbol_table().copy_from_device_async(13, &four, &stream).unwrap_err();
        let out_of_bounds = Bounds::Symbol { count: 4, offset: 13, name: "symbol_table", len: 16 };
        assert!(
            matches!(
                &err,
                CudaError::InvalidArgument { call: "DeviceSymbol::copy_from_device_async", reason: Refusal::OutOfBounds(bounds) }
                    if *bounds == out_of_bounds
            ),
            "{err}"
        );
        assert!(symbol_table().write(usize::MAX, &[1]).is_err());
        assert!(symbol_table().read(16, &mut [0]).is_err());
        let err = wrong::symbol_table().to_vec().unwrap_err();
        let mismatch =
            Refusal::SymbolSizeMismatch { name: "symbol_table", bytes: 64, len: 15, element_bytes: 4 };
        assert_eq!(err.refusal(), Some(&mismatch), "{err}");
        assert!(wrong::symbol_offset().write(0, &[0]).is_err());
        let graph = Graph::new()?;
        assert!(graph.add_memcpy_from_symbol(&four.ptr(), wrong::symbol_table(), 0, 4, &[]).is_err());
        assert!(graph.add_memcpy_to_symbol(symbol_table(), 13, &four.ptr(), 4, &[]).is_err());
        stream.synchronize()?;
        assert_eq!(symbol_table().to_vec()?, table, "refused copies changed nothing");

        // Nodes: pinned -> offset variable, kernel reads, table -> device, launched twice with
        // a new offset each time.
        let offset_in = PinnedBuffer::from_slice(&[100u32])?;
        let table_out = DeviceBuffer::<u32>::zeroed(16)?;
        let set = graph.add_memcpy_to_symbol_from_host(symbol_offset(), 0, &offset_in, 1, &[])?;
        let kernel =
            graph.add_kernel(add_symbol_table(), per_element(n as u32), (out.ptr(), n as u32), &[&set])?;
        let read = graph.add_memcpy_from_symbol(&table_out.ptr(), symbol_table(), 0, 16, &[&kernel])?;
        let rotated = DeviceBuffer::from_slice(&std::array::from_fn::<u32, 16, _>(|i| i as u32))?;
        graph.add_memcpy_to_symbol(symbol_table(), 0, &rotated.ptr(), 16, &[&read])?;
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        let mut offset_in = offset_in;
        for (launch, offset) in [100u32, 200].into_iter().enumerate() {
            offset_in.as_mut_slice()?[0] = offset;
            exec.launch(&stream)?;
            stream.synchronize()?;
            assert_eq!(out.to_vec()?, expected(&table, offset, n), "launch {launch}");
            assert_eq!(table_out.to_vec()?, table, "launch {launch}");
            table = std::array::from_fn(|i| i as u32); // the last node wrote this
            assert_eq!(symbol_table().to_vec()?, table, "launch {launch}");
        }
        Ok(())
    });
}

#[test]
fn a_modules_global_is_written_read_and_checked() {
    require_gpu!();
    run(|| {
        for (kind, module) in [
            ("ptx", Module::from_ptx(module_images::PLAIN_PTX)?),
            // SAFETY: the cubin cuda_build::ImageBuild wrote in module-images' build.rs, unchanged.
            ("cubin", unsafe { Module::from_image(module_images::PLAIN_CUBIN) }?),
        ] {
            let bias = module.symbol::<u32>("mod_bias", 4)?;
            bias.write(1, &[5, 6, 7])?;
            let stream = stream()?;
            let mut out = DeviceBuffer::<u32>::zeroed(2)?;
            bias.copy_to_device_async(2, &mut out, &stream)?;
            stream.synchronize()?;
            assert_eq!(out.to_vec()?, [6, 7], "{kind}");
            assert_eq!(bias.to_vec()?[1..], [5, 6, 7], "{kind}");
            let err = module.symbol::<u32>("mod_bias", 5)?.to_vec().unwrap_err();
            let mismatch =
                Refusal::SymbolSizeMismatch { name: "mod_bias", bytes: 16, len: 5, element_bytes: 4 };
            assert_eq!(err.refusal(), Some(&mismatch), "{kind}: {err}");
            assert!(module.symbol::<u32>("no_such_global", 1)?.to_vec().is_err(), "{kind}");
            assert!(bias.write(3, &[1, 2]).is_err(), "{kind}");
            // The symbol keeps the module loaded after the module handle is gone.
            drop(module);
            bias.write(0, &[42])?;
            assert_eq!(bias.to_vec()?[0], 42, "{kind}");
        }
        Ok(())
    });
}
