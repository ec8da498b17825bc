//! CUDA C++ compiled at run time with NVRTC (the `nvrtc` feature): compile errors
//! come back with NVRTC's log (no GPU needed, only NVRTC); compiled kernels launch on
//! streams, as graph nodes and inside a WHILE body (on a real GPU; skipped without one).
#![cfg(feature = "nvrtc")]

use cuda_graph::graph::{Graph, HostLaunch};
use cuda_graph::kernel::nvrtc::{compile, version, CompileError, CompileOptions, Output};
use cuda_graph::kernel::{Kernel, LaunchConfig, Module};
use cuda_graph::{Device, DeviceBuffer, DevicePtr, Stream};
use test_kernels::while_step;

const SOURCE: &str = r#"
extern "C" __global__ void affine(unsigned* data, unsigned n, unsigned scale, unsigned shift) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = data[i] * scale + shift;
}
"#;

/// Whether NVRTC can be loaded here; when it cannot, prints the skip line (or fails under
/// REQUIRE_GPU=1, where the toolkit is expected).
fn nvrtc_available(test: &str) -> bool {
    match version() {
        Ok(_) => true,
        Err(err) if gpu_test_support::gpu_required() => panic!("REQUIRE_GPU=1 but NVRTC is missing: {err}"),
        Err(err) => {
            eprintln!("skipped: no NVRTC ({err}): {test}");
            false
        }
    }
}

#[test]
fn compile_errors_come_back_with_the_log() {
    if !nvrtc_available("compile_errors_come_back_with_the_log") {
        return;
    }
    let options = CompileOptions { arch: Some(90), name: Some("broken.cu".into()), ..Default::default() };
    let err = compile("extern \"C\" __global__ void k() { undeclared_name = 1; }", &options).unwrap_err();
    match &err {
        CompileError::Compilation { program, log } => {
            assert_eq!(program, "broken.cu");
            assert!(log.contains("undeclared_name"), "{log}");
        }
        other => panic!("expected a compilation error, got {other:?}"),
    }
    let cuda: cuda_graph::CudaError = err.clone().into();
    let compile = cuda_graph::Refusal::Compile { message: err.to_string() };
    assert_eq!(cuda.refusal(), Some(&compile), "{cuda}");
    assert!(cuda.to_string().contains("undeclared_name"), "{cuda}");
}

#[test]
fn both_outputs_are_images_a_module_accepts() {
    if !nvrtc_available("both_outputs_are_images_a_module_accepts") {
        return;
    }
    for output in [Output::Cubin, Output::Ptx] {
        let compiled =
            compile(SOURCE, &CompileOptions { arch: Some(90), output, ..Default::default() }).unwrap();
        match output {
            Output::Cubin => assert!(compiled.image().starts_with(b"\x7fELF")),
            Output::Ptx => assert!(String::from_utf8_lossy(compiled.image()).contains(".entry affine")),
        }
    }
}

type Affine = Kernel<(DevicePtr<u32>, u32, u32, u32)>;

fn affine_of(module: &Module) -> Affine {
    // SAFETY: `affine(unsigned* data, unsigned n, unsigned scale, unsigned shift)` (the
    // C++ types of these Rust ones) writes data[i] only for i < n; the tests pass n <=
    // data.len().
    unsafe { module.kernel_unchecked_types("affine") }.unwrap()
}

#[test]
fn compiled_kernels_launch_on_streams_in_graphs_and_in_while_bodies() {
    gpu_test_support::require_gpu!();
    Device::get(0).unwrap().set_current().unwrap();
    let stream = Stream::new().unwrap();
    let module = Module::from_cuda_source(SOURCE).unwrap();
    assert_eq!(module.kernel_names().unwrap(), ["affine"]);
    assert_eq!(module.cpp_types("affine").unwrap(), None, "NVRTC output carries no type lists");
    let affine = affine_of(&module);
    // A stream launch.
    let data = DeviceBuffer::from_slice(&(0..100u32).collect::<Vec<_>>()).unwrap();
    affine.launch(&stream, LaunchConfig::for_elements(100, 64), (data.ptr(), 100, 3, 1)).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(data.to_vec().unwrap(), (0..100u32).map(|x| 3 * x + 1).collect::<Vec<_>>());
    // A WHILE whose body runs the compiled kernel `limit` times (x -> 2x + 1 each time).
    let (values, counter) =
        (DeviceBuffer::<u32>::zeroed(32).unwrap(), DeviceBuffer::<u32>::zeroed(1).unwrap());
    let graph = Graph::new().unwrap();
    let handle = graph.conditional_handle(Some(1)).unwrap();
    let (_, body) = graph.add_while(&handle, &[]).unwrap();
    let step =
        body.add_kernel(&affine, LaunchConfig::for_elements(32, 32), (values.ptr(), 32, 2, 1), &[]).unwrap();
    body.add_kernel(while_step(), LaunchConfig::new(1, 1), (handle, counter.ptr(), 5), &[&step]).unwrap();
    drop((affine, module)); // the graph keeps the module
    let exec = graph.instantiate::<HostLaunch>(Default::default()).unwrap();
    exec.launch(&stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(counter.to_vec().unwrap(), [5]);
    assert_eq!(values.to_vec().unwrap(), vec![31; 32], "0 -> 1 -> 3 -> 7 -> 15 -> 31");
}
