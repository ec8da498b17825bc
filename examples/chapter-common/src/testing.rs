//! What the programs' unit tests share beyond [`assert_options_checked`](crate::assert_options_checked).

/// For a crate's unit tests: each outcome of `Kernel::check_types` (one per kernel the crate
/// declares with `cuda_graph::kernels!`) is `Ok`. The check makes no CUDA call, so this runs
/// without a GPU; a refusal names its kernel and parameter. Panics with every refusal.
///
/// [`assert_kernel_types!`](crate::assert_kernel_types!) writes the list from the kernels' names.
///
/// ```
/// let refused = std::panic::catch_unwind(|| {
///     let refusal = cuda_graph::CudaError::KernelSignature { kernel: "k", problem: "parameter 0".into() };
///     chapter_common::assert_kernel_types(&[Ok(()), Err(refusal)]);
/// });
/// assert!(refused.is_err());
/// chapter_common::assert_kernel_types(&[Ok(()), Ok(())]);
/// ```
#[track_caller]
pub fn assert_kernel_types(checks: &[cuda_graph::Result<()>]) {
    let refusals: Vec<String> =
        checks.iter().filter_map(|check| check.as_ref().err()).map(|e| e.to_string()).collect();
    assert!(
        refusals.is_empty(),
        "kernel declarations that do not match their C++ kernels:\n{}",
        refusals.join("\n")
    );
}

/// [`assert_kernel_types`] over kernels named by their declaring functions:
/// `assert_kernel_types! { add, scale }` checks `add().check_types()` and
/// `scale().check_types()`.
///
/// ```
/// fn no_kernel() -> &'static NoKernel { &NoKernel }
/// struct NoKernel;
/// impl NoKernel {
///     fn check_types(&self) -> cuda_graph::Result<()> { Ok(()) }
/// }
/// chapter_common::assert_kernel_types! { no_kernel, no_kernel }
/// ```
#[macro_export]
macro_rules! assert_kernel_types {
    ($($kernel:path),+ $(,)?) => {
        $crate::assert_kernel_types(&[$($kernel().check_types()),+])
    };
}
