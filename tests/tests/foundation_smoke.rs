//! The foundation works end to end: kernels compiled by cuda-build run from Rust, CDP2 device
//! launches run (child and tail), and a graph built from the raw bindings runs. These use the
//! raw -sys API on purpose: they test the layer the safe crates stand on.

use std::ffi::c_void;
use std::ptr;

use cudart_graph_sys as sys;
use gpu_test_support::require_gpu;
use tests::{check, smoke_cdp_parent, smoke_fill_pattern, smoke_pattern, smoke_scale_add_index, stub};

/// A device allocation freed on drop (the raw tests' only RAII).
struct DeviceAlloc(*mut c_void);

impl DeviceAlloc {
    fn new(bytes: usize) -> DeviceAlloc {
        let mut p = ptr::null_mut();
        // SAFETY: `p` is a valid out-pointer; the runtime writes a device address into it.
        check(unsafe { sys::cudaMalloc(&mut p, bytes) }, "cudaMalloc");
        DeviceAlloc(p)
    }
    fn to_host<T: Copy + Default>(&self, len: usize) -> Vec<T> {
        let mut host = vec![T::default(); len];
        let bytes = len * size_of::<T>();
        // SAFETY: the device allocation holds at least `bytes` (callers read what they
        // allocated) and `host` has exactly `bytes` of writable memory.
        check(
            unsafe {
                sys::cudaMemcpy(
                    host.as_mut_ptr().cast(),
                    self.0,
                    bytes,
                    sys::cudaMemcpyKind::cudaMemcpyDeviceToHost,
                )
            },
            "cudaMemcpy D2H",
        );
        host
    }
}

impl Drop for DeviceAlloc {
    fn drop(&mut self) {
        // SAFETY: the pointer came from cudaMalloc and is freed once.
        check(unsafe { sys::cudaFree(self.0) }, "cudaFree");
    }
}

fn launch(kernel: unsafe extern "C" fn(), grid: u32, block: u32, args: &mut [*mut c_void]) {
    let dim = |x| sys::dim3 { x, y: 1, z: 1 };
    // SAFETY: `kernel` is the host stub of a kernel compiled into this binary; `args` holds one
    // pointer per kernel parameter, each to a live value of that parameter's type (the callers
    // build them from locals that outlive the call, which copies them).
    let status = unsafe {
        sys::cudaLaunchKernel(stub(kernel), dim(grid), dim(block), args.as_mut_ptr(), 0, ptr::null_mut())
    };
    check(status, "cudaLaunchKernel");
    // SAFETY: no arguments; reads and clears this thread's last error.
    check(unsafe { sys::cudaGetLastError() }, "kernel launch");
}

fn synchronize() {
    // SAFETY: no arguments; waits for all work on the device.
    check(unsafe { sys::cudaDeviceSynchronize() }, "cudaDeviceSynchronize");
}

#[test]
fn a_kernel_launched_from_rust_writes_the_pattern() {
    require_gpu!();
    let n: u32 = 10_000;
    let seed: u32 = 0x5eed_1234;
    let out = DeviceAlloc::new(n as usize * 4);
    let (mut p, mut n_arg, mut seed_arg) = (out.0, n, seed);
    let mut args =
        [ptr::addr_of_mut!(p).cast(), ptr::addr_of_mut!(n_arg).cast(), ptr::addr_of_mut!(seed_arg).cast()];
    launch(smoke_fill_pattern, n.div_ceil(256), 256, &mut args);
    synchronize();
    let host: Vec<u32> = out.to_host(n as usize);
    for (i, value) in host.iter().enumerate() {
        assert_eq!(*value, smoke_pattern(i as u32, seed), "element {i}");
    }
}

#[test]
fn a_cdp2_parent_launches_a_child_and_a_tail_kernel() {
    require_gpu!();
    let n: u32 = 4096;
    let start: Vec<u32> = (0..n).map(|i| i * 3 + 1).collect();
    let data = DeviceAlloc::new(n as usize * 4);
    let sum = DeviceAlloc::new(8);
    let status = DeviceAlloc::new(8);
    // SAFETY: `data` holds n u32s and `start` is n u32s of host memory; the 8-byte slots are
    // poisoned so the test fails if the kernels never write them.
    unsafe {
        check(
            sys::cudaMemcpy(
                data.0,
                start.as_ptr().cast(),
                n as usize * 4,
                sys::cudaMemcpyKind::cudaMemcpyHostToDevice,
            ),
            "cudaMemcpy H2D",
        );
        check(sys::cudaMemset(sum.0, 0xff, 8), "cudaMemset");
        check(sys::cudaMemset(status.0, 0x7f, 8), "cudaMemset");
    }
    let (mut d, mut n_arg, mut s, mut st) = (data.0, n, sum.0, status.0);
    let mut args = [
        ptr::addr_of_mut!(d).cast(),
        ptr::addr_of_mut!(n_arg).cast(),
        ptr::addr_of_mut!(s).cast(),
        ptr::addr_of_mut!(st).cast(),
    ];
    launch(smoke_cdp_parent, 1, 32, &mut args);
    synchronize();
    let launch_status: Vec<i32> = status.to_host(2);
    assert_eq!(launch_status, [0, 0], "device-side launch errors (child, tail)");
    let doubled: Vec<u32> = data.to_host(n as usize);
    assert!(
        doubled.iter().zip(&start).all(|(d, s)| *d == 2 * s),
        "the child kernel did not double every element"
    );
    let expected: u64 = start.iter().map(|&v| 2 * v as u64).sum();
    assert_eq!(sum.to_host::<u64>(1)[0], expected, "the tail kernel did not see the child's writes");
}

#[test]
fn a_three_node_graph_from_the_raw_bindings_runs() {
    require_gpu!();
    let n: u32 = 2048;
    let (fill, scale) = (7u32, 3u32);
    let data = DeviceAlloc::new(n as usize * 4);
    let mut host = vec![0u32; n as usize];
    let mut graph: sys::cudaGraph_t = ptr::null_mut();
    // SAFETY: `graph` is a valid out-pointer; flags 0 is the only defined value.
    check(unsafe { sys::cudaGraphCreate(&mut graph, 0) }, "cudaGraphCreate");

    let mut memset_params = sys::cudaGraphNodeParams {
        type_: sys::cudaGraphNodeType::cudaGraphNodeTypeMemset,
        ..Default::default()
    };
    memset_params.__bindgen_anon_1.memset = sys::cudaMemsetParamsV2 {
        dst: data.0,
        pitch: 0,
        value: fill,
        elementSize: 4,
        width: n as usize,
        height: 1,
    };
    let (mut d, mut n_arg, mut scale_arg) = (data.0, n, scale);
    let mut args: [*mut c_void; 3] =
        [ptr::addr_of_mut!(d).cast(), ptr::addr_of_mut!(n_arg).cast(), ptr::addr_of_mut!(scale_arg).cast()];
    let mut kernel_params = sys::cudaGraphNodeParams {
        type_: sys::cudaGraphNodeType::cudaGraphNodeTypeKernel,
        ..Default::default()
    };
    kernel_params.__bindgen_anon_1.kernel = sys::cudaKernelNodeParamsV2 {
        func: stub(smoke_scale_add_index) as *mut c_void,
        gridDim: sys::dim3 { x: n.div_ceil(256), y: 1, z: 1 },
        blockDim: sys::dim3 { x: 256, y: 1, z: 1 },
        sharedMemBytes: 0,
        kernelParams: args.as_mut_ptr(),
        extra: ptr::null_mut(),
    };
    let mut copy_params = sys::cudaGraphNodeParams {
        type_: sys::cudaGraphNodeType::cudaGraphNodeTypeMemcpy,
        ..Default::default()
    };
    let bytes = n as usize * 4;
    let pitched = |ptr| sys::cudaPitchedPtr { ptr, pitch: bytes, xsize: n as usize, ysize: 1 };
    copy_params.__bindgen_anon_1.memcpy = sys::cudaMemcpyNodeParams {
        copyParams: sys::cudaMemcpy3DParms {
            srcPtr: pitched(data.0),
            dstPtr: pitched(host.as_mut_ptr().cast()),
            extent: sys::cudaExtent { width: bytes, height: 1, depth: 1 },
            kind: sys::cudaMemcpyKind::cudaMemcpyDeviceToHost,
            ..Default::default()
        },
        ..Default::default()
    };

    let mut nodes: [sys::cudaGraphNode_t; 3] = [ptr::null_mut(); 3];
    for (i, params) in [&mut memset_params, &mut kernel_params, &mut copy_params].into_iter().enumerate() {
        let deps: Vec<sys::cudaGraphNode_t> = if i == 0 { vec![] } else { vec![nodes[i - 1]] };
        // SAFETY: `graph` is live; `deps` holds `deps.len()` nodes of this graph; `params` is a
        // fully initialised node description whose pointers (buffers, args) outlive the graph.
        let status = unsafe {
            sys::cudaGraphAddNode(&mut nodes[i], graph, deps.as_ptr(), ptr::null(), deps.len(), params)
        };
        check(status, "cudaGraphAddNode");
    }
    let mut count = 0usize;
    // SAFETY: `graph` is live; a null node array asks for the count only.
    check(unsafe { sys::cudaGraphGetNodes(graph, ptr::null_mut(), &mut count) }, "cudaGraphGetNodes");
    assert_eq!(count, 3);

    let mut exec: sys::cudaGraphExec_t = ptr::null_mut();
    // SAFETY: `graph` is live and complete; `exec` is a valid out-pointer.
    check(unsafe { sys::cudaGraphInstantiate(&mut exec, graph, 0) }, "cudaGraphInstantiate");
    // SAFETY: `exec` was just instantiated; stream 0 is the legacy default stream.
    unsafe {
        check(sys::cudaGraphLaunch(exec, ptr::null_mut()), "cudaGraphLaunch");
        check(sys::cudaStreamSynchronize(ptr::null_mut()), "cudaStreamSynchronize");
        check(sys::cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
        check(sys::cudaGraphDestroy(graph), "cudaGraphDestroy");
    }
    for (i, value) in host.iter().enumerate() {
        assert_eq!(*value, fill * scale + i as u32, "element {i}");
    }
}
