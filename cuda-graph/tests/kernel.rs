//! Typed kernels on a real GPU: launches compute what the CPU computes, the parameter check
//! passes correct declarations and refuses wrong ones before anything runs, bad geometry is
//! refused before CUDA is called, and a launch CUDA refuses is an error, not a panic.

use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{sys, CudaError, DeviceBuffer, Refusal, Stream};
use gpu_test_support::require_gpu;

/// `abi_probe` declared with `b: u32` where the kernel has `double b`.
mod wrong_type {
    use cuda_graph::DevicePtr;
    cuda_graph::kernels! {
        // SAFETY: abi_probe writes p[0..4]; never launched (the check refuses `b: u32`).
        pub unsafe fn abi_probe(p: DevicePtr<f32>, a: u32, b: u32, c: u8, d: i32);
    }
}

/// `abi_probe` declared without its last parameter.
mod too_few {
    use cuda_graph::DevicePtr;
    cuda_graph::kernels! {
        // SAFETY: abi_probe writes p[0..4]; never launched (the check refuses the count).
        pub unsafe fn abi_probe(p: DevicePtr<f32>, a: u32, b: f64, c: u8);
    }
}

/// A small seeded xorshift64* generator: reproducible inputs without a dependency.
struct XorShift(u64);

impl XorShift {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in [-1, 1), never exactly zero.
    fn nonzero_unit_f32(&mut self) -> f32 {
        loop {
            let value = (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0;
            if value != 0.0 {
                return value;
            }
        }
    }
}

/// Runs a test body, failing the test with the error's message if it returns one.
fn run(body: impl FnOnce() -> Result<(), CudaError>) {
    if let Err(err) = body() {
        panic!("{err}");
    }
}

fn last_error_is_clear() -> bool {
    // SAFETY: no arguments; reads this thread's last error without resetting it.
    unsafe { sys::cudaPeekAtLastError() == sys::cudaError::cudaSuccess }
}

#[test]
fn fill_pattern_writes_every_element() {
    require_gpu!();
    run(|| {
        let stream = Stream::new()?;
        let n: u32 = 100_003; // not a multiple of the block size: the last block is partial
        let seed = 0x5eed_1234;
        let out = DeviceBuffer::<u32>::zeroed(n as usize)?;
        test_kernels::fill_pattern().launch(
            &stream,
            LaunchConfig::for_elements(n, 256),
            (out.ptr(), n, seed),
        )?;
        stream.synchronize()?;
        for (i, value) in out.to_vec()?.iter().enumerate() {
            assert_eq!(*value, test_kernels::pattern(i as u32, seed), "element {i}");
        }
        Ok(())
    });
}

#[test]
fn saxpy_matches_the_cpu_on_random_inputs() {
    require_gpu!();
    run(|| {
        let stream = Stream::new()?;
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        let n: u32 = 65_537;
        let a = 1.0 + rng.nonzero_unit_f32().abs() * 2.0;
        let x: Vec<f32> = (0..n).map(|_| rng.nonzero_unit_f32()).collect();
        let y: Vec<f32> = (0..n).map(|_| rng.nonzero_unit_f32()).collect();
        let x_device = DeviceBuffer::from_slice(&x)?;
        let y_device = DeviceBuffer::from_slice(&y)?;
        let args = (a, x_device.ptr(), y_device.ptr(), n);
        test_kernels::saxpy().launch(&stream, LaunchConfig::for_elements(n, 128), args)?;
        stream.synchronize()?;
        let result = y_device.to_vec()?;
        for i in 0..n as usize {
            // The GPU may fuse the multiply-add (one rounding) or not (two): allow either.
            let expected = a.mul_add(x[i], y[i]);
            let tolerance = 2.0 * f32::EPSILON * expected.abs().max(a * x[i].abs()).max(1.0);
            assert!(
                (result[i] - expected).abs() <= tolerance,
                "element {i}: GPU {} vs CPU {expected} (a {a}, x {}, y {})",
                result[i],
                x[i],
                y[i]
            );
        }
        assert_eq!(x_device.to_vec()?, x, "saxpy must not write x");
        Ok(())
    });
}

#[test]
fn correct_declarations_pass_the_check_and_every_value_arrives() {
    require_gpu!();
    run(|| {
        test_kernels::fill_pattern().function()?;
        test_kernels::add_scalar().function()?;
        test_kernels::scale_add_index().function()?;
        test_kernels::increment_counter().function()?;
        test_kernels::saxpy().function()?;
        test_kernels::noop().function()?;
        test_kernels::set_condition_from().function()?;
        test_kernels::while_step().function()?;

        let stream = Stream::new()?;
        let p = DeviceBuffer::from_slice(&[-1.0f32; 4])?;
        let args = (p.ptr(), 123_456u32, 0.15625f64, 200u8, -77i32);
        test_kernels::abi_probe().launch(&stream, LaunchConfig::new(1, 1), args)?;
        stream.synchronize()?;
        assert_eq!(p.to_vec()?, [123_456.0, 0.15625, 200.0, -77.0]);
        Ok(())
    });
}

#[test]
fn the_shared_test_kernels_compute_what_their_docs_say() {
    require_gpu!();
    run(|| {
        let stream = Stream::new()?;
        let n: u32 = 1000;
        let start: Vec<u32> = (0..n).map(|i| i * 7 + 3).collect();
        let data = DeviceBuffer::from_slice(&start)?;
        let config = LaunchConfig::for_elements(n, 128);
        test_kernels::add_scalar().launch(&stream, config, (data.ptr(), n, 11))?;
        test_kernels::scale_add_index().launch(&stream, config, (data.ptr(), n, 3))?;
        let counters = DeviceBuffer::<u32>::zeroed(4)?;
        for _ in 0..3 {
            // Many threads, one increment per launch.
            test_kernels::increment_counter().launch(
                &stream,
                LaunchConfig::new(4, 64),
                (counters.ptr(), 2),
            )?;
        }
        test_kernels::noop().launch(&stream, LaunchConfig::new(1, 1), ())?;
        stream.synchronize()?;
        let expected: Vec<u32> = start.iter().enumerate().map(|(i, v)| (v + 11) * 3 + i as u32).collect();
        assert_eq!(data.to_vec()?, expected);
        assert_eq!(counters.to_vec()?, [0, 0, 3, 0]);
        Ok(())
    });
}

#[test]
fn a_wrong_parameter_type_is_a_signature_error_and_nothing_runs() {
    require_gpu!();
    run(|| {
        let stream = Stream::new()?;
        let p = DeviceBuffer::from_slice(&[-1.0f32; 4])?;
        for _ in 0..2 {
            // The second call returns the kept outcome of the first check.
            let err = wrong_type::abi_probe()
                .launch(&stream, LaunchConfig::new(1, 1), (p.ptr(), 1, 2, 3, 4))
                .expect_err("a launch with a wrong declaration must be refused");
            match &err {
                CudaError::KernelSignature { kernel, problem } => {
                    assert_eq!(*kernel, "abi_probe");
                    assert_eq!(
                        problem,
                        "parameter 2 (`b: u32`): Rust declares 4 bytes at offset 12, \
                     the compiled kernel has 8 bytes at offset 16"
                    );
                }
                other => panic!("expected KernelSignature, got {other:?}"),
            }
        }
        assert!(matches!(wrong_type::abi_probe().function(), Err(CudaError::KernelSignature { .. })));
        stream.synchronize()?;
        assert_eq!(p.to_vec()?, [-1.0; 4], "the kernel ran despite the failed check");
        Ok(())
    });
}

#[test]
fn a_missing_parameter_is_a_signature_error_and_nothing_runs() {
    require_gpu!();
    run(|| {
        let stream = Stream::new()?;
        let p = DeviceBuffer::from_slice(&[-1.0f32; 4])?;
        let err = too_few::abi_probe()
            .launch(&stream, LaunchConfig::new(1, 1), (p.ptr(), 1, 2.0, 3))
            .expect_err("a launch with a parameter missing must be refused");
        let text = err.to_string();
        assert!(matches!(&err, CudaError::KernelSignature { kernel: "abi_probe", .. }), "{err:?}");
        assert!(text.contains("Rust declares 4 parameters, the compiled kernel has 5"), "{text}");
        stream.synchronize()?;
        assert_eq!(p.to_vec()?, [-1.0; 4], "the kernel ran despite the failed check");
        Ok(())
    });
}

#[test]
fn impossible_geometry_is_refused_before_cuda_is_called() {
    require_gpu!();
    run(|| {
        let stream = Stream::new()?;
        let out = DeviceBuffer::<u32>::zeroed(64)?;
        let p = DeviceBuffer::<f32>::zeroed(4)?;
        for config in [LaunchConfig::new(1, 2048), LaunchConfig::new(0, 32), LaunchConfig::new((1, 0), 32)] {
            let err = test_kernels::fill_pattern()
                .launch(&stream, config, (out.ptr(), 64, 1))
                .expect_err("an impossible launch must be refused");
            let geometry = |err: &CudaError| {
                matches!(err.refusal(), Some(Refusal::EmptyLaunch { .. } | Refusal::BlockTooLarge { .. }))
            };
            assert!(
                matches!(err, CudaError::InvalidArgument { call: "Kernel::launch", .. }) && geometry(&err),
                "{config:?}: {err:?}"
            );
            // A kernel whose check would fail gets the geometry error: the geometry is checked
            // before the kernel is looked up, so before any CUDA call.
            let err = wrong_type::abi_probe()
                .launch(&stream, config, (p.ptr(), 1, 2, 3, 4))
                .expect_err("an impossible launch must be refused");
            assert!(geometry(&err), "{config:?}: {err:?}");
        }
        assert!(last_error_is_clear(), "a refused geometry reached CUDA");
        stream.synchronize()?;
        assert_eq!(out.to_vec()?, [0; 64], "a refused launch ran");
        Ok(())
    });
}

#[test]
fn too_much_shared_memory_is_a_cuda_error_that_does_not_linger() {
    require_gpu!();
    run(|| {
        let stream = Stream::new()?;
        let config = LaunchConfig::new(1, 32).with_shared_mem(16 << 20); // 16 MiB: no GPU has it
        let err =
            test_kernels::noop().launch(&stream, config, ()).expect_err("16 MiB of shared memory per block");
        assert!(matches!(err, CudaError::Api { call: "cudaLaunchKernel", .. }), "{err:?}");
        assert!(err.code().is_some());
        assert!(last_error_is_clear(), "the refused launch left its error for the next cudaGetLastError");
        // The error is not sticky: the next launch works.
        let out = DeviceBuffer::<u32>::zeroed(32)?;
        test_kernels::fill_pattern().launch(&stream, LaunchConfig::new(1, 32), (out.ptr(), 32, 5))?;
        stream.synchronize()?;
        assert_eq!(out.to_vec()?[31], test_kernels::pattern(31, 5));
        Ok(())
    });
}

#[test]
fn a_raised_dynamic_shared_memory_limit_lets_bigger_blocks_launch_and_run_in_graphs() {
    require_gpu!();
    run(|| {
        let device = cuda_graph::Device::get(0)?;
        let stream = Stream::new()?;
        let kernel = test_kernels::reverse_through_shared();
        const WORDS: u32 = 24 * 1024; // 96 KB: past the 48 KB every kernel may use
        let input: Vec<u32> = (0..WORDS).map(|i| test_kernels::pattern(i, 3)).collect();
        let reversed: Vec<u32> = input.iter().rev().copied().collect();
        let src = DeviceBuffer::from_slice(&input)?;
        let out = DeviceBuffer::<u32>::zeroed(WORDS as usize)?;
        let config = LaunchConfig::new(1, 256).with_shared_mem(WORDS * 4);
        let args = || (src.const_ptr(), out.ptr(), WORDS);

        // From a host function: refused before any CUDA call, and nothing remembered of it (the
        // call below still sets both of CUDA's limits: the kernel node further down needs both).
        let (sender, receiver) = std::sync::mpsc::channel();
        stream.launch_host_fn(move || {
            let refused = kernel.set_max_dynamic_shared_mem(device, WORDS * 4);
            let _ = sender.send(matches!(
                refused,
                Err(CudaError::InvalidArgument { reason: Refusal::InHostFunction, .. })
            ));
        })?;
        stream.synchronize()?;
        assert!(receiver.recv().expect("the host function ran"), "refused in a host function");

        // Before the limit is raised: CUDA refuses the launch, an error that does not linger.
        let err = kernel.launch(&stream, config, args()).expect_err("96 KB before the limit is raised");
        assert!(err.code().is_some(), "{err:?}");
        assert!(last_error_is_clear());

        kernel.set_max_dynamic_shared_mem(device, WORDS * 4)?;
        kernel.launch(&stream, config, args())?;
        stream.synchronize()?;
        assert_eq!(out.to_vec()?, reversed, "a stream launch with 96 KB");

        // The same in a graph (the limit is the kernel's on the device, not the launch's).
        let again = DeviceBuffer::<u32>::zeroed(WORDS as usize)?;
        let graph = cuda_graph::graph::Graph::new()?;
        graph.add_kernel(kernel, config, (src.const_ptr(), again.ptr(), WORDS), &[])?;
        let exec = graph.instantiate::<cuda_graph::graph::HostLaunch>(Default::default())?;
        exec.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!(again.to_vec()?, reversed, "a kernel node with 96 KB");
        // And a node added with attributes (`cudaGraphAddNode`, the kernel's context-independent
        // handle), after a plain node by a programmatic edge.
        let third = DeviceBuffer::<u32>::zeroed(WORDS as usize)?;
        let graph = cuda_graph::graph::Graph::new()?;
        let first = graph.add_kernel(kernel, config, (src.const_ptr(), again.ptr(), WORDS), &[])?;
        let attributes = cuda_graph::kernel::KernelAttributes::default();
        let after = if device.properties()?.major >= 9 {
            [cuda_graph::graph::Dependency::programmatic(&first)]
        } else {
            [cuda_graph::graph::Dependency::full(&first)] // no programmatic launch before sm_90
        };
        graph.add_kernel_with(kernel, config, (src.const_ptr(), third.ptr(), WORDS), &attributes, &after)?;
        let exec = graph.instantiate::<cuda_graph::graph::HostLaunch>(Default::default())?;
        exec.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!(third.to_vec()?, reversed, "a kernel node added with attributes, with 96 KB");

        // More than any block may have: CUDA's refusal, an error, and none left behind.
        let err = kernel.set_max_dynamic_shared_mem(device, 4 << 20).expect_err("4 MB of shared memory");
        assert!(matches!(err, CudaError::Api { call: "cudaFuncSetAttribute", .. }), "{err:?}");
        assert!(last_error_is_clear(), "the refused attribute left its error behind");
        // Past i32: refused before CUDA is called.
        let err = kernel.set_max_dynamic_shared_mem(device, u32::MAX).expect_err("u32::MAX bytes");
        assert!(
            matches!(err, CudaError::InvalidArgument { reason: Refusal::OutOfRange { .. }, .. }),
            "{err:?}"
        );
        // The limit set before still holds.
        kernel.launch(&stream, config, args())?;
        stream.synchronize()?;
        Ok(())
    });
}
