//! The kernel chain: what its kernels compute (the port's integer step or the listing's three
//! float maps), the CPU reference, and the three ways the program issues it (launch by launch
//! on a stream, captured from the stream, built node by node).

use std::fmt::Debug;

use chapter_common::Rng;
use cuda_graph::graph::{AsNode, CaptureMode, Graph, GraphExec, HostLaunch, KernelNode};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{DeviceBuffer, DevicePtr, DeviceRepr, Result, Stream};

// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu); the declarations are private to this crate, whose launches pass counts
// no larger than the buffers they point into.
cuda_graph::kernels! {
    /// One step of the chain: `dst[i] = Step { mul, add }.apply(src[i])` for `i < n`.
    pub unsafe fn cg_step(src: DevicePtr<u32>, dst: DevicePtr<u32>, n: u32, mul: u32, add: u32);
    /// The listing's kernel A, in place: `data[i] = fma(data[i], mul, add)` for `i < n`.
    pub unsafe fn cg_map_affine(data: DevicePtr<f32>, n: u32, mul: f32, add: f32);
    /// The listing's kernel B, in place: `data[i] = sqrt(fma(data[i], data[i], add))`.
    pub unsafe fn cg_map_hypot(data: DevicePtr<f32>, n: u32, add: f32);
    /// The listing's kernel C, in place: `data[i] = sinf(data[i] * scale)`.
    pub unsafe fn cg_map_sine(data: DevicePtr<f32>, n: u32, scale: f32);
}

pub use chapter_common::Arithmetic;

/// The constants of one kernel of the port's chain; [`Step::apply`] is what `cc_mul_add` in
/// `kernels/chain.cu` does to one element, [`Step::random`] draws a chain's constants.
pub type Step = chapter_common::MulAdd;

/// The output of one pass of `steps` over `input` (the port's chain).
pub fn reference(input: &[u32], steps: &[Step]) -> Vec<u32> {
    reference_passes(input, steps, 1)
}

/// The output after `passes` passes of `steps`, each continuing from the one before, starting
/// from `input`: what a run of `passes` iterations, on the stream or in a graph, must leave
/// (the port's chain). Every step is a bijection of `u32`, so one pass more or fewer changes
/// (almost) every element.
///
/// ```
/// let steps = [cuda_graphs::Step { mul: 3, add: 1 }];
/// let once = cuda_graphs::reference(&[2], &steps);
/// assert_eq!(cuda_graphs::reference_passes(&[2], &steps, 2), cuda_graphs::reference(&once, &steps));
/// ```
pub fn reference_passes(input: &[u32], steps: &[Step], passes: u32) -> Vec<u32> {
    model_passes::<PortChain>(input, steps, passes)
}

/// The output after `passes` passes of `steps` of chain `C` over `input`, on the CPU.
pub fn model_passes<C: Chain>(input: &[C::Value], steps: &[C::Step], passes: u32) -> Vec<C::Value> {
    input.iter().map(|&x| (0..passes).fold(x, |x, _| steps.iter().fold(x, |x, &s| C::apply(x, s)))).collect()
}

/// The sum of all elements, as a 64-bit number (what the book prints as its checksum).
pub fn checksum(values: &[u32]) -> u64 {
    values.iter().map(|&v| u64::from(v)).sum()
}

/// The most `f32` values the GPU's result of the listing's chain may lie from the CPU's
/// ([`ulp_distance`]), element by element.
///
/// Why 8: every operation of the chain but the sine rounds as IEEE says on both sides (a fused
/// multiply-add, a square root, a rounded product), so the two sides differ only through
/// `sinf`. CUDA documents at most 2 ulps of error for it without fast math, and the CPU's sine
/// (the `f64` one rounded, [`cpu_sin`]) is within half an ulp, so one sine differs by at most 2
/// steps of the float grid. The listing's chain contracts (after the first pass each pass
/// shrinks a difference in its input about 50-fold), so what one pass's sine puts in does not
/// pile up; but where every pass computes the same sine (at the fixed point the chain converges
/// to), the same error comes back every pass, and the other operations' roundings may then fall
/// the other way. A CPU model whose sine is 2 values off in every call, the same way each time
/// or alternating, ends up at most 4 values from the plain model, over 100 passes of the
/// listing's chain, 50 passes of 20 kernels, and 1 or 20 passes of seeded constants (this
/// file's tests); 8 is twice that. It still finds a skipped kernel, one pass fewer or more in
/// runs of 1 to 3 passes, a changed constant, or a sine 20 values off, as the fast `__sinf`
/// (up to 2^-21.4 absolute error, about 48 ulps at these values) can be.
pub const MAP_TOLERANCE_ULPS: u32 = 8;

pub use chapter_common::ulp_distance;

/// An element the chain maps, and how far apart the GPU's and the CPU's may be.
pub trait Value: DeviceRepr + Copy + PartialEq + Debug + Send + Sync {
    /// The most [`distance`](Value::distance) at which two values still agree.
    const TOLERANCE: u32;

    /// How far apart `a` and `b` are: for integers their difference (saturated), for floats
    /// the values between them ([`ulp_distance`]).
    fn distance(a: Self, b: Self) -> u32;

    /// Whether the GPU's `got` agrees with the CPU's `want`.
    fn agrees(got: Self, want: Self) -> bool {
        Self::distance(got, want) <= Self::TOLERANCE
    }
}

impl Value for u32 {
    const TOLERANCE: u32 = 0;

    fn distance(a: u32, b: u32) -> u32 {
        a.abs_diff(b)
    }
}

impl Value for f32 {
    const TOLERANCE: u32 = MAP_TOLERANCE_ULPS;

    fn distance(a: f32, b: f32) -> u32 {
        ulp_distance(a, b)
    }
}

/// A chain of kernels of one kind: its values, its steps, their CPU model, and how a step is
/// launched, recorded as a node and changed in an exec. [`PortChain`] and [`ListingChain`].
pub trait Chain {
    /// What an element is.
    type Value: Value;
    /// One kernel's kind and constants.
    type Step: Copy + Debug + PartialEq;

    /// The arithmetic this chain is.
    const ARITHMETIC: Arithmetic;

    /// The input of `n` elements (from `rng` where it is random).
    fn input(n: u32, rng: &mut Rng) -> Vec<Self::Value>;
    /// The chain's `kernels` steps.
    fn steps(kernels: u32, rng: &mut Rng) -> Vec<Self::Step>;
    /// Other steps of the same kinds in the same order, for a whole-graph update.
    fn other_steps(kernels: u32, rng: &mut Rng) -> Vec<Self::Step>;
    /// The same kind of step with another constant, for a per-node update.
    fn changed(step: Self::Step, rng: &mut Rng) -> Self::Step;
    /// What the step's kernel does to one element, on the CPU.
    fn apply(x: Self::Value, step: Self::Step) -> Self::Value;
    /// Checks the kernels' parameter types once (a capture would refuse the CUDA calls that
    /// takes).
    fn prepare() -> Result<()>;
    /// Queues the step's kernel over `out`, in place, on `stream`.
    fn launch(
        stream: &Stream, config: LaunchConfig, step: Self::Step, out: &DeviceBuffer<Self::Value>,
    ) -> Result<()>;
    /// Adds the step's kernel over `out` to `graph`, after `deps`.
    fn add_node(
        graph: &Graph, config: LaunchConfig, step: Self::Step, out: &DeviceBuffer<Self::Value>,
        deps: &[&dyn AsNode],
    ) -> Result<KernelNode>;
    /// Gives `node` (a kernel of the step's kind) the step's constants in `exec`.
    fn set_node(
        exec: &mut GraphExec<HostLaunch>, node: &KernelNode, config: LaunchConfig, step: Self::Step,
        out: &DeviceBuffer<Self::Value>,
    ) -> Result<()>;
}

/// The port's chain: `cg_step` with seeded constants, on random `u32`s.
pub struct PortChain;

/// The arguments of a step with constants `step`, in place over `out`.
fn step_args(step: Step, out: &DeviceBuffer<u32>) -> (DevicePtr<u32>, DevicePtr<u32>, u32, u32, u32) {
    (out.ptr(), out.ptr(), out.len() as u32, step.mul, step.add)
}

impl Chain for PortChain {
    type Value = u32;
    type Step = Step;
    const ARITHMETIC: Arithmetic = Arithmetic::Port;

    fn input(n: u32, rng: &mut Rng) -> Vec<u32> {
        (0..n).map(|_| rng.next_u64() as u32).collect()
    }

    fn steps(kernels: u32, rng: &mut Rng) -> Vec<Step> {
        Step::random(rng, kernels)
    }

    fn other_steps(kernels: u32, rng: &mut Rng) -> Vec<Step> {
        Step::random(rng, kernels)
    }

    fn changed(step: Step, rng: &mut Rng) -> Step {
        Step { add: step.add ^ (rng.next_u64() as u32 | 1), ..step }
    }

    fn apply(x: u32, step: Step) -> u32 {
        step.apply(x)
    }

    fn prepare() -> Result<()> {
        cg_step().function().map(drop)
    }

    fn launch(stream: &Stream, config: LaunchConfig, step: Step, out: &DeviceBuffer<u32>) -> Result<()> {
        cg_step().launch(stream, config, step_args(step, out))
    }

    fn add_node(
        graph: &Graph, config: LaunchConfig, step: Step, out: &DeviceBuffer<u32>, deps: &[&dyn AsNode],
    ) -> Result<KernelNode> {
        graph.add_kernel(cg_step(), config, step_args(step, out), deps)
    }

    fn set_node(
        exec: &mut GraphExec<HostLaunch>, node: &KernelNode, config: LaunchConfig, step: Step,
        out: &DeviceBuffer<u32>,
    ) -> Result<()> {
        exec.set_kernel_params(node, cg_step(), config, step_args(step, out))
    }
}

/// One kernel of the listing's chain: which of its three maps, with which constants.
/// [`MapStep::apply`] is the CPU model of the kernels in `kernels/chain.cu`, rounding as they do.
///
/// ```
/// use cuda_graphs::MapStep;
/// assert_eq!(MapStep::Affine { mul: 2.0, add: 1.0 }.apply(3.0), 7.0);
/// assert_eq!(MapStep::Hypot { add: 16.0 }.apply(3.0), 5.0);
/// assert_eq!(MapStep::Sine { scale: 0.5 }.apply(0.0), 0.0);
/// let [a, b, c] = MapStep::LISTING;
/// assert_eq!(MapStep::listing(5), [a, b, c, a, b]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MapStep {
    /// Kernel A: `x * mul + add`, one fused multiply-add.
    Affine {
        /// The factor (the listing: 1.1).
        mul: f32,
        /// The addend (the listing: 0.1).
        add: f32,
    },
    /// Kernel B: `sqrt(x * x + add)`, the inner part one fused multiply-add.
    Hypot {
        /// The addend (the listing: 1).
        add: f32,
    },
    /// Kernel C: `sin(x * scale)`, the product rounded, then the sine (`sinf` on the GPU).
    Sine {
        /// The factor (the listing: 0.1).
        scale: f32,
    },
}

impl MapStep {
    /// The listing's three kernels with its constants, in its order.
    pub const LISTING: [MapStep; 3] =
        [MapStep::Affine { mul: 1.1, add: 0.1 }, MapStep::Hypot { add: 1.0 }, MapStep::Sine { scale: 0.1 }];

    /// `kernels` steps: the listing's three in turn (exactly the listing's for 3).
    pub fn listing(kernels: u32) -> Vec<MapStep> {
        (0..kernels as usize).map(|k| MapStep::LISTING[k % 3]).collect()
    }

    /// `kernels` steps of the listing's kinds in turn, with seeded constants near the listing's
    /// (factors and addends positive, `x * scale` small: the chain stays a contraction).
    pub fn random(rng: &mut Rng, kernels: u32) -> Vec<MapStep> {
        MapStep::listing(kernels)
            .into_iter()
            .map(|step| match step {
                MapStep::Affine { .. } => {
                    MapStep::Affine { mul: rng.f32_in(1.0, 1.2), add: rng.f32_in(0.05, 0.15) }
                }
                MapStep::Hypot { .. } => MapStep::Hypot { add: rng.f32_in(0.5, 2.0) },
                MapStep::Sine { .. } => MapStep::Sine { scale: rng.f32_in(0.05, 0.15) },
            })
            .collect()
    }

    /// The same kind of step with its constant moved far enough that one pass shows it.
    pub fn changed(self, rng: &mut Rng) -> MapStep {
        match self {
            MapStep::Affine { mul, add } => MapStep::Affine { mul, add: add + rng.f32_in(0.1, 0.3) },
            MapStep::Hypot { add } => MapStep::Hypot { add: add + rng.f32_in(0.5, 1.5) },
            MapStep::Sine { scale } => MapStep::Sine { scale: scale * rng.f32_in(1.5, 2.0) },
        }
    }

    /// What the step's kernel does to one element, on the CPU: the same roundings, and for
    /// the sine [`cpu_sin`].
    pub fn apply(self, x: f32) -> f32 {
        match self {
            MapStep::Affine { mul, add } => x.mul_add(mul, add),
            MapStep::Hypot { add } => x.mul_add(x, add).sqrt(),
            MapStep::Sine { scale } => cpu_sin(x * scale),
        }
    }
}

/// The CPU's sine of `x`: the `f64` sine rounded to `f32`, within half an `f32` ulp (and a
/// hair) of the exact value, whatever the platform's `sinf` does.
pub fn cpu_sin(x: f32) -> f32 {
    f64::from(x).sin() as f32
}

/// The listing's chain: its three float kernels on `x[i] = i / n`, as the listing's input.
pub struct ListingChain;

impl Chain for ListingChain {
    type Value = f32;
    type Step = MapStep;
    const ARITHMETIC: Arithmetic = Arithmetic::Listing;

    fn input(n: u32, _: &mut Rng) -> Vec<f32> {
        (0..n).map(|i| i as f32 / n as f32).collect()
    }

    fn steps(kernels: u32, _: &mut Rng) -> Vec<MapStep> {
        MapStep::listing(kernels)
    }

    fn other_steps(kernels: u32, rng: &mut Rng) -> Vec<MapStep> {
        MapStep::random(rng, kernels)
    }

    fn changed(step: MapStep, rng: &mut Rng) -> MapStep {
        step.changed(rng)
    }

    fn apply(x: f32, step: MapStep) -> f32 {
        step.apply(x)
    }

    fn prepare() -> Result<()> {
        cg_map_affine().function()?;
        cg_map_hypot().function()?;
        cg_map_sine().function().map(drop)
    }

    fn launch(stream: &Stream, config: LaunchConfig, step: MapStep, out: &DeviceBuffer<f32>) -> Result<()> {
        let (data, n) = (out.ptr(), out.len() as u32);
        match step {
            MapStep::Affine { mul, add } => cg_map_affine().launch(stream, config, (data, n, mul, add)),
            MapStep::Hypot { add } => cg_map_hypot().launch(stream, config, (data, n, add)),
            MapStep::Sine { scale } => cg_map_sine().launch(stream, config, (data, n, scale)),
        }
    }

    fn add_node(
        graph: &Graph, config: LaunchConfig, step: MapStep, out: &DeviceBuffer<f32>, deps: &[&dyn AsNode],
    ) -> Result<KernelNode> {
        let (data, n) = (out.ptr(), out.len() as u32);
        match step {
            MapStep::Affine { mul, add } => {
                graph.add_kernel(cg_map_affine(), config, (data, n, mul, add), deps)
            }
            MapStep::Hypot { add } => graph.add_kernel(cg_map_hypot(), config, (data, n, add), deps),
            MapStep::Sine { scale } => graph.add_kernel(cg_map_sine(), config, (data, n, scale), deps),
        }
    }

    fn set_node(
        exec: &mut GraphExec<HostLaunch>, node: &KernelNode, config: LaunchConfig, step: MapStep,
        out: &DeviceBuffer<f32>,
    ) -> Result<()> {
        let (data, n) = (out.ptr(), out.len() as u32);
        match step {
            MapStep::Affine { mul, add } => {
                exec.set_kernel_params(node, cg_map_affine(), config, (data, n, mul, add))
            }
            MapStep::Hypot { add } => exec.set_kernel_params(node, cg_map_hypot(), config, (data, n, add)),
            MapStep::Sine { scale } => exec.set_kernel_params(node, cg_map_sine(), config, (data, n, scale)),
        }
    }
}

/// Queues one pass of `steps` over `out` (in place) on `stream`, one `cudaLaunchKernel` per
/// step. While `stream` is being captured, the same calls record the pass into the graph
/// instead.
pub fn launch_pass<C: Chain>(
    stream: &Stream, config: LaunchConfig, steps: &[C::Step], out: &DeviceBuffer<C::Value>,
) -> Result<()> {
    for &step in steps {
        C::launch(stream, config, step, out)?;
    }
    Ok(())
}

/// Records one pass of `steps` into a new graph by stream capture (the chapter's way).
pub fn capture_pass<C: Chain>(
    stream: &Stream, config: LaunchConfig, steps: &[C::Step], out: &DeviceBuffer<C::Value>,
) -> Result<Graph> {
    C::prepare()?;
    let capture = stream.begin_capture(CaptureMode::ThreadLocal)?;
    launch_pass::<C>(stream, config, steps, out)?;
    capture.end()
}

/// Builds the same pass node by node, each kernel node depending on the one before, and
/// returns the nodes (whose parameters an exec can then change one at a time).
pub fn build_pass<C: Chain>(
    config: LaunchConfig, steps: &[C::Step], out: &DeviceBuffer<C::Value>,
) -> Result<(Graph, Vec<KernelNode>)> {
    let graph = Graph::new()?;
    let mut nodes: Vec<KernelNode> = Vec::with_capacity(steps.len());
    for &step in steps {
        let node = match nodes.last() {
            Some(prev) => C::add_node(&graph, config, step, out, &[prev])?,
            None => C::add_node(&graph, config, step, out, &[])?,
        };
        nodes.push(node);
    }
    Ok((graph, nodes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_changed_constant_changes_the_result() {
        let mut rng = Rng::new(9);
        let input: Vec<u32> = (0..64).map(|_| rng.next_u64() as u32).collect();
        let steps = Step::random(&mut rng, 20);
        let mut changed = steps.clone();
        changed[10].add ^= 0x5bd1_e995;
        assert_ne!(reference(&input, &steps), reference(&input, &changed));
        assert_eq!(checksum(&[u32::MAX, u32::MAX]), 2 * u64::from(u32::MAX));
    }

    #[test]
    fn every_pass_shows_in_the_output() {
        // A graph that skipped a replay (or a stream that lost a pass) leaves the output of
        // fewer passes: the reference for n passes differs from n - 1 and n + 1 passes in
        // (almost) every element, so the check counts passes, not just the last one.
        let mut rng = Rng::new(0x5eed);
        let input: Vec<u32> = (0..1000).map(|_| rng.next_u64() as u32).collect();
        let steps = Step::random(&mut rng, 6);
        let at = |passes| reference_passes(&input, &steps, passes);
        for passes in [1, 2, 20, 21] {
            let (fewer, want, more) = (at(passes - 1), at(passes), at(passes + 1));
            let same = |a: &[u32]| a.iter().zip(&want).filter(|(x, y)| x == y).count();
            assert!(same(&fewer) < 5 && same(&more) < 5, "{passes}: {} {}", same(&fewer), same(&more));
        }
        assert_eq!(at(0), input);
        assert_eq!(at(1), reference(&input, &steps));
        assert_eq!(at(2), reference(&reference(&input, &steps), &steps));
    }

    /// The listing's chain on the CPU with every sine moved `ulps` values away from the CPU's
    /// (up, or alternating down and up): a stand-in for a GPU whose `sinf` is that far off.
    fn off_by(x: f32, steps: &[MapStep], passes: u32, ulps: i32, alternate: bool) -> f32 {
        let mut calls = 0;
        (0..passes).fold(x, |x, _| {
            steps.iter().fold(x, |x, &step| match step {
                MapStep::Sine { scale } => {
                    calls += 1;
                    let sign = if alternate && calls % 2 == 0 { -1 } else { 1 };
                    f32::from_bits((cpu_sin(x * scale).to_bits() as i32 + sign * ulps) as u32)
                }
                _ => step.apply(x),
            })
        })
    }

    #[test]
    fn a_sine_two_ulps_off_stays_within_the_tolerance() {
        let mut rng = Rng::new(3);
        let chains = [
            (MapStep::listing(3), 100),
            (MapStep::listing(20), 50),
            (MapStep::random(&mut rng, 3), 1),
            (MapStep::random(&mut rng, 6), 20),
        ];
        let n = 1 << 20;
        let mut worst = 0;
        for (steps, passes) in &chains {
            for i in (0..n).step_by(4099).chain([1, n - 1]) {
                let x = i as f32 / n as f32;
                let want = model_passes::<ListingChain>(&[x], steps, *passes)[0];
                for (ulps, alternate) in [(2, false), (-2, false), (2, true)] {
                    let got = off_by(x, steps, *passes, ulps, alternate);
                    worst = worst.max(ulp_distance(got, want));
                }
            }
        }
        assert!(worst <= 4, "{worst} ulps: the tolerance's margin is gone");
        assert!(worst <= MAP_TOLERANCE_ULPS);
    }

    #[test]
    fn what_the_tolerance_still_finds() {
        let n = 1 << 16;
        let input = ListingChain::input(n, &mut Rng::new(1));
        let steps = MapStep::listing(3);
        let at = |passes| model_passes::<ListingChain>(&input, &steps, passes);
        let beyond = |a: &[f32], b: &[f32]| a.iter().zip(b).filter(|(x, y)| !f32::agrees(**x, **y)).count();
        // One, two and three passes are told apart from one pass fewer or more...
        for passes in 1..=3 {
            assert!(beyond(&at(passes), &at(passes - 1)) > n as usize / 2, "{passes}");
            assert!(beyond(&at(passes), &at(passes + 1)) > n as usize / 2, "{passes}");
        }
        // ... but the map converges: by 10 passes, 100 and 99 agree (why short runs count passes).
        assert_eq!(beyond(&at(100), &at(99)), 0);
        // A skipped kernel, a changed constant, and the fast sine (a stand-in 20 ulps off).
        let one = at(1);
        assert!(beyond(&model_passes::<ListingChain>(&input, &steps[..2], 1), &one) > 0);
        let mut changed = steps.clone();
        changed[1] = changed[1].changed(&mut Rng::new(2));
        assert!(beyond(&model_passes::<ListingChain>(&input, &changed, 1), &one) > n as usize / 2);
        let fast: Vec<f32> = input.iter().map(|&x| off_by(x, &steps, 1, 20, false)).collect();
        assert_eq!(beyond(&fast, &one), input.len());
    }

    #[test]
    fn the_listings_input_and_kernels() {
        let input = ListingChain::input(4, &mut Rng::new(0));
        assert_eq!(input, [0.0, 0.25, 0.5, 0.75]);
        // A fused multiply-add: 0.1 * 1.1 + 0.1 rounded once.
        let x = 0.1f32;
        assert_eq!(MapStep::LISTING[0].apply(x), x.mul_add(1.1, 0.1));
        assert_eq!(MapStep::LISTING[2].apply(10.0), cpu_sin(1.0));
        assert_eq!(u32::distance(5, 2), 3);
        assert!(u32::agrees(7, 7) && !u32::agrees(7, 8));
        let mut rng = Rng::new(4);
        for step in MapStep::random(&mut rng, 3) {
            let changed = step.changed(&mut rng);
            assert_ne!(changed, step);
            assert_eq!(std::mem::discriminant(&changed), std::mem::discriminant(&step));
        }
    }
}

/// The kernels declared in this file against their C++ parameter types (`check_types` needs
/// no GPU: it reads the signature functions cuda-build compiled next to the kernels).
#[cfg(test)]
mod kernel_declarations {
    use super::*;

    #[test]
    fn match_the_cpp_parameter_types() {
        chapter_common::assert_kernel_types! { cg_step, cg_map_affine, cg_map_hypot, cg_map_sine }
    }
}
