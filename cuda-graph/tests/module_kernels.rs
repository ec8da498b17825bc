//! Kernels from modules loaded at run time: PTX, cubin and fatbin images built by
//! `cuda_build::ImageBuild` (tests/module-images), looked up by name as typed kernels with
//! the same checks as `kernels!`, launched on streams, as graph nodes, in conditional bodies,
//! captured and set on execs; on a real GPU (skipped without one).

mod graph_support;

use cuda_graph::graph::{CaptureMode, ConditionalHandle, Graph, HostLaunch, NodeKind};
use cuda_graph::kernel::{Kernel, Module};
use cuda_graph::{CudaError, DeviceBuffer, DevicePtr, DeviceSlice, Refusal};
use gpu_test_support::require_gpu;
use graph_support::{one, per_element, run, stream};
use module_images::{CONDITIONAL_FATBIN, PLAIN_CUBIN, PLAIN_FATBIN, PLAIN_PTX};

type Add = Kernel<(DevicePtr<u32>, u32, u32)>;

/// `mod_add` of `module`, type-checked against the image's signature.
fn add_of(module: &Module) -> Result<Add, CudaError> {
    // SAFETY: mod_add writes data[i] only for i < n; these tests pass n <= data.len().
    unsafe { module.kernel("mod_add") }
}

/// Loads one of tests/module-images' images.
fn load(image: &'static [u8]) -> Result<Module, CudaError> {
    // SAFETY: every image passed here is one cuda_build::ImageBuild wrote in module-images'
    // build.rs, included unchanged (`include_bytes!`).
    unsafe { Module::from_image(image) }
}

fn modules() -> Result<Vec<(&'static str, Module)>, CudaError> {
    Ok(vec![
        ("ptx", Module::from_ptx(PLAIN_PTX)?),
        ("cubin", load(PLAIN_CUBIN)?),
        ("fatbin", load(PLAIN_FATBIN)?),
    ])
}

#[test]
fn every_image_kind_loads_names_its_kernels_and_launches_them() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        for (kind, module) in modules()? {
            let mut names = module.kernel_names()?;
            names.sort();
            assert_eq!(names, ["mod_add", "mod_fill", "mod_scale"], "{kind}");
            assert_eq!(
                module.cpp_types("mod_add")?,
                Some(vec!["*mut u32".into(), "u32".into(), "u32".into()]),
                "{kind}"
            );
            let data = DeviceBuffer::from_slice(&(0..1000u32).collect::<Vec<_>>())?;
            add_of(&module)?.launch(&stream, per_element(1000), (data.ptr(), 1000, 7))?;
            // SAFETY: mod_scale writes data[i] only for i < n; launched with n = data.len().
            let scale = unsafe { module.kernel::<(DevicePtr<f32>, u32, f32)>("mod_scale") }?;
            let floats = DeviceBuffer::from_slice(&[1.0f32, 2.0, 3.0])?;
            scale.launch(&stream, per_element(3), (floats.ptr(), 3, 2.5))?;
            // SAFETY: mod_fill writes only inside its slice.
            let fill = unsafe { module.kernel::<(DeviceSlice<u32>, u32)>("mod_fill") }?;
            let filled = DeviceBuffer::<u32>::zeroed(300)?;
            fill.launch(&stream, per_element(300), (filled.ptr().into_slice(), 9))?;
            stream.synchronize()?;
            assert_eq!(data.to_vec()?, (7..1007u32).collect::<Vec<_>>(), "{kind}");
            assert_eq!(floats.to_vec()?, [3.5, 6.0, 8.5], "{kind}");
            assert_eq!(filled.to_vec()?, vec![9; 300], "{kind}");
        }
        Ok(())
    });
}

#[test]
fn wrong_declarations_are_refused_before_any_launch() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let module = load(PLAIN_FATBIN)?;
        let data = DeviceBuffer::<f64>::zeroed(4)?;
        // Same sizes as `float*`: only the type check tells them apart.
        // SAFETY: never launched: the check refuses it.
        let wrong = unsafe { module.kernel::<(DevicePtr<f64>, u32, f32)>("mod_scale") }?;
        let err = wrong.launch(&stream, per_element(4), (data.ptr(), 4, 1.0)).unwrap_err();
        assert!(matches!(err, CudaError::KernelSignature { kernel: "mod_scale", .. }), "{err}");
        assert!(err.to_string().contains("*mut f32"), "{err}");
        // The count and sizes are checked without the image's types too.
        // SAFETY: never launched: the check refuses it.
        let short = unsafe { module.kernel_unchecked_types::<(DevicePtr<u32>, u32)>("mod_add") }?;
        let err = short.function().unwrap_err();
        assert!(err.to_string().contains("Rust declares 2 parameters, the compiled kernel has 3"), "{err}");
        // Unknown kernels are CUDA's "symbol not found".
        // SAFETY: the lookup fails.
        assert!(unsafe { module.kernel::<()>("no_such_kernel") }.is_err());
        stream.synchronize()?;
        assert_eq!(data.to_vec()?, [0.0; 4], "nothing ran");
        Ok(())
    });
}

/// SOUNDNESS.md, "Things of other code", item 9: the type lists are read when the module is loaded,
/// so rewriting a kernel's signature global afterwards cannot make a wrong declaration pass. Safe
/// code could rewrite it through `Module::symbol` (now refused for these names; either refusal
/// passes this test, a wrong-typed kernel that passes its check never does).
#[test]
fn a_rewritten_signature_global_does_not_change_what_a_lookup_accepts() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        for (kind, module) in modules()? {
            let genuine = module.cpp_types("mod_scale")?.expect("ImageBuild images carry types").join(", ");
            assert_eq!(genuine, "*mut f32, u32, f32", "{kind}");
            // The same length, so that the global's size check lets the write through.
            let forged = format!("{}\0", genuine.replacen("*mut f32", "*mut f64", 1));
            match module.symbol::<u8>("mod_scale__cuda_graph_signature", forged.len()) {
                Err(err) => {
                    assert!(matches!(err.refusal(), Some(Refusal::ReservedSymbol { .. })), "{kind}: {err}")
                }
                Ok(global) => global.write(0, forged.as_bytes())?,
            }
            // SAFETY: never launched: refused by the lookup or by the check at first use.
            let lookup = unsafe { module.kernel::<(DevicePtr<f64>, u32, f32)>("mod_scale") };
            let refusal = match lookup {
                Err(err) => err,
                Ok(wrong) => match wrong.function() {
                    Err(err) => err,
                    Ok(_) => panic!("{kind}: a double* declaration of mod_scale(float*, …) passed its check"),
                },
            };
            assert!(
                matches!(refusal, CudaError::KernelSignature { kernel: "mod_scale", .. }),
                "{kind}: {refusal}"
            );
            assert!(refusal.to_string().contains("*mut f32"), "{kind}: {refusal}");
            assert_eq!(module.cpp_types("mod_scale")?.map(|types| types.join(", ")), Some(genuine), "{kind}");
            // The genuine declaration still passes and runs.
            // SAFETY: mod_scale writes data[i] only for i < n; launched with n = data.len().
            let scale = unsafe { module.kernel::<(DevicePtr<f32>, u32, f32)>("mod_scale") }?;
            let floats = DeviceBuffer::from_slice(&[1.0f32, 2.0])?;
            scale.launch(&stream, per_element(2), (floats.ptr(), 2, 4.0))?;
            stream.synchronize()?;
            assert_eq!(floats.to_vec()?, [5.0, 9.0], "{kind}"); // data * 4 + 1
        }
        Ok(())
    });
}

/// SOUNDNESS.md, "Things of other code", item 9: the globals that carry the type lists are not
/// handed out.
#[test]
fn the_signature_globals_are_not_handed_out() {
    require_gpu!();
    run(|| {
        for (kind, module) in modules()? {
            let err = module.symbol::<u8>("mod_add__cuda_graph_signature", 1).unwrap_err();
            assert!(
                matches!(err.refusal(), Some(Refusal::ReservedSymbol { name, .. }) if name == "mod_add__cuda_graph_signature"),
                "{kind}: {err}"
            );
            // Other globals still are.
            assert_eq!(module.symbol::<u32>("mod_bias", 4)?.len(), 4, "{kind}");
        }
        Ok(())
    });
}

#[test]
fn module_kernels_are_graph_nodes_that_keep_their_module_loaded() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let data = DeviceBuffer::<u32>::zeroed(512)?;
        let graph = Graph::new()?;
        let node = {
            let module = load(PLAIN_CUBIN)?;
            let add = add_of(&module)?;
            let first = graph.add_kernel(&add, per_element(512), (data.ptr(), 512, 1), &[])?;
            let second = graph.add_kernel(&add, per_element(512), (data.ptr(), 512, 10), &[&first])?;
            // Read back through the driver (the runtime's call refuses module kernels): the
            // function, its name and the configuration, with no failing CUDA call.
            let params = graph.kernel_params(&second)?;
            assert_eq!((params.config, params.name.as_deref()), (per_element(512), Some("mod_add")));
            assert!(params.launches(&add)?);
            // SAFETY: not launched; only compared.
            let scale = unsafe { module.kernel::<(DevicePtr<f32>, u32, f32)>("mod_scale") }?;
            assert!(!params.launches(&scale)?);
            second
            // `module` and `add` are dropped: the graph keeps the module.
        };
        let infos = graph.nodes()?;
        let kinds: Vec<_> = infos.iter().map(|info| info.kind()).collect();
        assert_eq!(kinds, [NodeKind::Kernel, NodeKind::Kernel]);
        assert!(infos.iter().all(|info| info.kernel_name() == Some("mod_add")), "{infos:?}");
        let mut exec = graph.instantiate::<HostLaunch>(Default::default())?;
        drop(graph);
        exec.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!(data.to_vec()?, vec![11; 512]);
        // A setter pointing the second node at another module's kernel (adding 100 where it
        // added 10): that module is kept too. The first node still adds 1.
        let other = Module::from_ptx(PLAIN_PTX)?;
        exec.set_kernel_params(&node, &add_of(&other)?, per_element(512), (data.ptr(), 512, 100))?;
        drop(other);
        exec.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!(data.to_vec()?, vec![11 + 1 + 100; 512]);
        Ok(())
    });
}

/// The CPU model of the WHILE loop below: doubles `value` until it reaches `limit` (at least
/// once), adding `step` to each element per iteration.
fn model(value: u32, limit: u32, step: u32, start: &[u32]) -> (u32, Vec<u32>) {
    let (mut value, mut iterations) = (value, 0);
    loop {
        value *= 2;
        iterations += 1;
        if value >= limit {
            break;
        }
    }
    (value, start.iter().map(|x| x + step * iterations).collect())
}

#[test]
fn a_while_loop_of_module_kernels_runs_as_long_as_the_data_says() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let plain = Module::from_ptx(PLAIN_PTX)?;
        let conditional = load(CONDITIONAL_FATBIN)?;
        // SAFETY: mod_double_until reads value[0] and limit[0] and writes value[0] only.
        let double = unsafe {
            conditional.kernel::<(ConditionalHandle, DevicePtr<u32>, DevicePtr<u32>)>("mod_double_until")
        }?;
        let add = add_of(&plain)?;
        for (start, limit) in [(1u32, 2u32), (1, 1000), (3, 100), (5, 5)] {
            let data = DeviceBuffer::from_slice(&(0..64u32).collect::<Vec<_>>())?;
            let value = DeviceBuffer::from_slice(&[start])?;
            let bound = DeviceBuffer::from_slice(&[limit])?;
            let graph = Graph::new()?;
            let handle = graph.conditional_handle(Some(1))?;
            let (_, body) = graph.add_while(&handle, &[])?;
            let step = body.add_kernel(&add, per_element(64), (data.ptr(), 64, 3), &[])?;
            body.add_kernel(&double, one(), (handle, value.ptr(), bound.ptr()), &[&step])?;
            let exec = graph.instantiate::<HostLaunch>(Default::default())?;
            exec.launch(&stream)?;
            stream.synchronize()?;
            let (end, expected) = model(start, limit, 3, &(0..64u32).collect::<Vec<_>>());
            assert_eq!(value.to_vec()?, [end], "start {start}, limit {limit}");
            assert_eq!(data.to_vec()?, expected, "start {start}, limit {limit}");
        }
        Ok(())
    });
}

#[test]
fn captured_module_launches_keep_their_module() {
    require_gpu!();
    run(|| {
        let stream = stream()?;
        let data = DeviceBuffer::<u32>::zeroed(128)?;
        let graph = {
            let module = load(PLAIN_FATBIN)?;
            let add = add_of(&module)?;
            let capture = stream.begin_capture(CaptureMode::Global)?;
            add.launch(&stream, per_element(128), (data.ptr(), 128, 5))?;
            capture.end()?
        };
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        for _ in 0..3 {
            exec.launch(&stream)?;
        }
        stream.synchronize()?;
        assert_eq!(data.to_vec()?, vec![15; 128]);
        Ok(())
    });
}

#[test]
fn images_that_are_not_whole_are_refused() {
    // Needs no GPU: refused before the driver reads them.
    let cut = &PLAIN_FATBIN[..PLAIN_FATBIN.len().min(64)];
    if PLAIN_FATBIN.is_empty() {
        return; // a docs-only build has empty images
    }
    // SAFETY: not a complete image, which `from_image` asks for: this shows the header checks
    // kept as a defence refusing it before the driver reads it (nothing is loaded).
    let err = unsafe { Module::from_image(cut) }.unwrap_err();
    let malformed = |err: &CudaError, image: &str| matches!(err.refusal(), Some(Refusal::MalformedImage { format, .. }) if *format == image);
    assert!(malformed(&err, "fatbin"), "{err}");
    // SAFETY: as above.
    let err = unsafe { Module::from_image(&PLAIN_CUBIN[..PLAIN_CUBIN.len() - 1]) }.unwrap_err();
    assert!(malformed(&err, "cubin"), "{err}");
}
