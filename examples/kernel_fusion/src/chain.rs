//! The elementwise chain: its constants, the CPU reference, the kernels, and the three ways of
//! running one pass of it (unfused launches on a stream, one fused launch, a graph of the
//! unfused kernels).

use chapter_common::Rng;
use cuda_graph::graph::{Graph, HostLaunch};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{DeviceBuffer, DevicePtr, GraphExec, Result, Stream};

// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu); the declarations are private to this crate, whose launches pass counts
// no larger than the buffers they point into.
cuda_graph::kernels! {
    /// (1) `dst = src * a`.
    pub unsafe fn kf_scale(src: DevicePtr<f32>, dst: DevicePtr<f32>, n: u32, a: f32);
    /// (2) `dst = src + other`.
    pub unsafe fn kf_add(src: DevicePtr<f32>, other: DevicePtr<f32>, dst: DevicePtr<f32>, n: u32);
    /// (3) `dst = min(max(src, lo), hi)`.
    pub unsafe fn kf_clamp(src: DevicePtr<f32>, dst: DevicePtr<f32>, n: u32, lo: f32, hi: f32);
    /// (4) `dst = src + c`.
    pub unsafe fn kf_shift(src: DevicePtr<f32>, dst: DevicePtr<f32>, n: u32, c: f32);
    /// (5) `dst = sqrt(src)`.
    pub unsafe fn kf_sqrt(src: DevicePtr<f32>, dst: DevicePtr<f32>, n: u32);
    /// (6) `dst += src * g + b`.
    pub unsafe fn kf_affine(src: DevicePtr<f32>, dst: DevicePtr<f32>, n: u32, g: f32, b: f32);
    /// All six operations in one pass over `x` and `y`: `out = x + chain(x, y)` (in place
    /// when `out` is `x`).
    pub unsafe fn kf_fused(
        x: DevicePtr<f32>,
        y: DevicePtr<f32>,
        out: DevicePtr<f32>,
        n: u32,
        a: f32,
        lo: f32,
        hi: f32,
        c: f32,
        g: f32,
        b: f32,
    );
}

/// Operations in the chain (one kernel each when unfused).
pub const OPS: usize = 6;

/// Bytes per element the unfused chain moves: scale 8, add 12, clamp, shift and sqrt 8 each,
/// affine 12 (every op reads its input and writes its output; add also reads `y`, affine also
/// reads the state `x` it adds to).
pub const UNFUSED_BYTES_PER_ELEMENT: u64 = 8 + 12 + 3 * 8 + 8 + 4;

/// Bytes per element that must move at the least: read `x` and `y`, write `x`. The fused
/// kernel moves exactly these.
pub const MIN_BYTES_PER_ELEMENT: u64 = 12;

/// The chain's constants: `f(x, y) = sqrt(clamp(x * a + y, lo, hi) + c) * g + b`. A pass
/// adds it to the state: `x += f(x, y)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Chain {
    /// Scale of `x` (op 1).
    pub a: f32,
    /// Lower clamp bound (op 3), negative.
    pub lo: f32,
    /// Upper clamp bound (op 3), positive.
    pub hi: f32,
    /// Shift after the clamp (op 4); `lo + c > 0`, so the square root sees no negative.
    pub c: f32,
    /// Gain of the last op (6).
    pub g: f32,
    /// Bias of the last op (6).
    pub b: f32,
}

impl Chain {
    /// Seeded constants: `a` in [1, 2), bounds that clip a real share of the values of
    /// `x * a + y` (x in [-4, 4), y in [-2, 2)) on both sides, a shift that keeps the root's
    /// argument at least 0.25.
    pub fn random(rng: &mut Rng) -> Chain {
        let lo = rng.f32_in(-2.5, -1.0);
        Chain {
            a: rng.f32_in(1.0, 2.0),
            lo,
            hi: rng.f32_in(1.0, 2.5),
            c: 0.25 - lo,
            g: rng.f32_in(0.5, 1.5),
            b: rng.f32_in(-1.0, 1.0),
        }
    }

    /// One element through the chain, in the kernels' order and f32 rounding (no fused
    /// multiply-add: each product is rounded before the sum, as `__fmul_rn`/`__fadd_rn` do).
    ///
    /// ```
    /// let chain = kernel_fusion::Chain { a: 2.0, lo: -1.0, hi: 2.0, c: 1.25, g: 2.0, b: 0.5 };
    /// // 1*2 + 0 = 2 -> clamp 2 -> +1.25 = 3.25 -> sqrt -> *2 + 0.5
    /// assert_eq!(chain.apply(1.0, 0.0), 3.25f32.sqrt() * 2.0 + 0.5);
    /// // clipped below: -5*2 + 1 = -9 -> -1 -> 0.25 -> 0.5 -> 1.5
    /// assert_eq!(chain.apply(-5.0, 1.0), 1.5);
    /// ```
    pub fn apply(&self, x: f32, y: f32) -> f32 {
        let t = x * self.a;
        let t = t + y;
        let t = t.max(self.lo).min(self.hi);
        let t = t + self.c;
        let t = t.sqrt();
        t * self.g + self.b
    }

    /// One pass over one element of the state: `x + apply(x, y)`, the sum rounded once more
    /// (`kf_affine` and `kf_fused` add the same two f32 values).
    ///
    /// ```
    /// let chain = kernel_fusion::Chain { a: 2.0, lo: -1.0, hi: 2.0, c: 1.25, g: 2.0, b: 0.5 };
    /// assert_eq!(chain.step(-5.0, 1.0), -5.0 + 1.5);
    /// ```
    pub fn step(&self, x: f32, y: f32) -> f32 {
        x + self.apply(x, y)
    }

    /// The chain over whole arrays: the output of one pass, `apply` per element.
    pub fn reference(&self, x: &[f32], y: &[f32]) -> Vec<f32> {
        x.iter().zip(y).map(|(&x, &y)| self.apply(x, y)).collect()
    }

    /// The state after `passes` passes from `x`, each continuing from the one before: what a
    /// run of `passes` passes of any variant must leave in the state buffer. Elements are
    /// independent, so large arrays are split over the host's threads (the result is the same).
    pub fn reference_passes(&self, x: &[f32], y: &[f32], passes: u32) -> Vec<f32> {
        let one = |x: &[f32], y: &[f32], out: &mut [f32]| {
            for ((o, &x), &y) in out.iter_mut().zip(x).zip(y) {
                *o = (0..passes).fold(x, |x, _| self.step(x, y));
            }
        };
        let mut out = vec![0.0f32; x.len().min(y.len())];
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let chunk = out.len().div_ceil(threads).max(1 << 16);
        std::thread::scope(|scope| {
            for ((out, x), y) in out.chunks_mut(chunk).zip(x.chunks(chunk)).zip(y.chunks(chunk)) {
                scope.spawn(move || one(x, y, out));
            }
        });
        out
    }
}

/// How one pass of the chain is issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// Six kernels launched one by one on the stream; intermediates go through a scratch
    /// buffer, the last kernel adds the result to the state.
    Unfused,
    /// One kernel doing all six operations in registers.
    Fused,
    /// The six unfused kernels as nodes of one graph, launched with one call.
    Graph,
}

impl Variant {
    /// All variants, in report order.
    pub const ALL: [Variant; 3] = [Variant::Unfused, Variant::Fused, Variant::Graph];

    /// A short name, used in figure names (`<name>_ms`).
    pub fn name(self) -> &'static str {
        match self {
            Variant::Unfused => "unfused",
            Variant::Fused => "fused",
            Variant::Graph => "graph",
        }
    }

    /// Bytes per element this variant's kernels read and write.
    pub fn bytes_per_element(self) -> u64 {
        match self {
            Variant::Fused => MIN_BYTES_PER_ELEMENT,
            Variant::Unfused | Variant::Graph => UNFUSED_BYTES_PER_ELEMENT,
        }
    }

    /// Kernel launches (or graph kernel nodes) per pass.
    pub fn kernels_per_pass(self) -> usize {
        match self {
            Variant::Fused => 1,
            Variant::Unfused | Variant::Graph => OPS,
        }
    }
}

/// The argument tuples of the six unfused kernels for one pass over the state `x` (with `y`),
/// intermediates in `out`, the last kernel adding its result to `x`.
struct OpArgs {
    scale: (DevicePtr<f32>, DevicePtr<f32>, u32, f32),
    add: (DevicePtr<f32>, DevicePtr<f32>, DevicePtr<f32>, u32),
    clamp: (DevicePtr<f32>, DevicePtr<f32>, u32, f32, f32),
    shift: (DevicePtr<f32>, DevicePtr<f32>, u32, f32),
    sqrt: (DevicePtr<f32>, DevicePtr<f32>, u32),
    affine: (DevicePtr<f32>, DevicePtr<f32>, u32, f32, f32),
}

impl OpArgs {
    fn new(chain: &Chain, x: &DeviceBuffer<f32>, y: &DeviceBuffer<f32>, out: &DeviceBuffer<f32>) -> OpArgs {
        let n = out.len() as u32;
        let o = || out.ptr();
        OpArgs {
            scale: (x.ptr(), o(), n, chain.a),
            add: (o(), y.ptr(), o(), n),
            clamp: (o(), o(), n, chain.lo, chain.hi),
            shift: (o(), o(), n, chain.c),
            sqrt: (o(), o(), n),
            affine: (o(), x.ptr(), n, chain.g, chain.b),
        }
    }
}

/// The device side for one array size: the state and its start, `y`, the scratch buffer, the
/// stream, and the instantiated graph.
pub struct Bench {
    chain: Chain,
    x: DeviceBuffer<f32>,
    x0: DeviceBuffer<f32>,
    y: DeviceBuffer<f32>,
    out: DeviceBuffer<f32>,
    config: LaunchConfig,
    exec: GraphExec<HostLaunch>,
    /// The stream every variant runs on.
    pub stream: Stream,
}

impl Bench {
    /// Uploads `x` (the state's start, twice: the state and a copy to reset it from) and `y`,
    /// and builds the graph of the unfused pass (six kernel nodes in a chain).
    pub fn new(chain: Chain, x: &[f32], y: &[f32], threads_per_block: u32) -> Result<Bench> {
        let x0 = DeviceBuffer::from_slice(x)?;
        let x = DeviceBuffer::from_slice(x)?;
        let y = DeviceBuffer::from_slice(y)?;
        let out = DeviceBuffer::<f32>::zeroed(x.len())?;
        let config = LaunchConfig::for_elements(x.len() as u32, threads_per_block);
        let graph = Graph::new()?;
        let args = OpArgs::new(&chain, &x, &y, &out);
        let scale = graph.add_kernel(kf_scale(), config, args.scale, &[])?;
        let add = graph.add_kernel(kf_add(), config, args.add, &[&scale])?;
        let clamp = graph.add_kernel(kf_clamp(), config, args.clamp, &[&add])?;
        let shift = graph.add_kernel(kf_shift(), config, args.shift, &[&clamp])?;
        let sqrt = graph.add_kernel(kf_sqrt(), config, args.sqrt, &[&shift])?;
        graph.add_kernel(kf_affine(), config, args.affine, &[&sqrt])?;
        let stream = Stream::new()?;
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        exec.upload(&stream)?;
        Ok(Bench { chain, x, x0, y, out, config, exec, stream })
    }

    /// Elements per array.
    pub fn len(&self) -> usize {
        self.out.len()
    }

    /// True for empty arrays (never, once validated).
    pub fn is_empty(&self) -> bool {
        self.out.is_empty()
    }

    /// Queues one pass of `variant` on the stream.
    pub fn queue_pass(&self, variant: Variant) -> Result<()> {
        let (stream, config, chain) = (&self.stream, self.config, &self.chain);
        match variant {
            Variant::Unfused => {
                let args = OpArgs::new(chain, &self.x, &self.y, &self.out);
                kf_scale().launch(stream, config, args.scale)?;
                kf_add().launch(stream, config, args.add)?;
                kf_clamp().launch(stream, config, args.clamp)?;
                kf_shift().launch(stream, config, args.shift)?;
                kf_sqrt().launch(stream, config, args.sqrt)?;
                kf_affine().launch(stream, config, args.affine)
            }
            Variant::Fused => {
                let c = chain;
                let n = self.out.len() as u32;
                // In place: out is the state x.
                let args = (self.x.ptr(), self.y.ptr(), self.x.ptr(), n, c.a, c.lo, c.hi, c.c, c.g, c.b);
                kf_fused().launch(stream, config, args)
            }
            Variant::Graph => self.exec.launch(stream),
        }
    }

    /// Resets the state to `x` on the stream, and fills the scratch buffer with NaN bit
    /// patterns (`0xffffffff`), so a run starts from the same state every time and an
    /// intermediate that was not written shows.
    pub fn reset(&mut self) -> Result<()> {
        self.x.copy_from_device_async(&self.x0, &self.stream)?;
        self.out.memset_async(0xff, &self.stream)
    }

    /// The state (waits for the work queued so far).
    pub fn output(&self) -> Result<Vec<f32>> {
        self.stream.synchronize()?;
        self.x.to_vec()
    }
}

/// The first element where `got` and `want` differ in their bits, with both values.
pub fn first_difference(got: &[f32], want: &[f32]) -> Option<(usize, f32, f32)> {
    if got.len() != want.len() {
        return Some((got.len().min(want.len()), got.len() as f32, want.len() as f32));
    }
    got.iter().zip(want).position(|(g, w)| g.to_bits() != w.to_bits()).map(|i| (i, got[i], want[i]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_keep_the_root_argument_positive_and_clip_both_sides() {
        let mut rng = Rng::new(3);
        for _ in 0..100 {
            let chain = Chain::random(&mut rng);
            assert!(chain.lo < 0.0 && chain.hi > 0.0);
            assert!(chain.lo + chain.c >= 0.2499);
            // x in [-4, 4), y in [-2, 2): x * a + y reaches beyond both bounds.
            assert!(-4.0 * chain.a < chain.lo && 4.0 * chain.a > chain.hi);
        }
    }

    #[test]
    fn the_reference_is_finite_and_not_constant() {
        let mut rng = Rng::new(5);
        let chain = Chain::random(&mut rng);
        let x = rng.vec_f32(10_000, -4.0, 4.0);
        let y = rng.vec_f32(10_000, -2.0, 2.0);
        let out = chain.reference(&x, &y);
        assert!(out.iter().all(|v| v.is_finite()));
        let clipped_low = out.iter().filter(|&&v| v == chain.apply(-100.0, 0.0)).count();
        let clipped_high = out.iter().filter(|&&v| v == chain.apply(100.0, 0.0)).count();
        assert!(clipped_low > 100 && clipped_high > 100, "{clipped_low} {clipped_high}");
        assert!(out.iter().any(|&v| v != out[0]));
    }

    #[test]
    fn every_pass_shows_in_the_state() {
        // The state after n passes differs from n - 1 and n + 1 passes in (almost) every
        // element, for the seeds the program uses: a skipped or repeated pass fails the check.
        for seed in [0x5eed, 1, 2, 3] {
            let chain = Chain::random(&mut Rng::new(seed));
            let mut rng = Rng::new(seed ^ 0x55);
            let x = rng.vec_f32(10_000, -4.0, 4.0);
            let y = rng.vec_f32(10_000, -2.0, 2.0);
            let mut prev = chain.reference_passes(&x, &y, 0);
            assert_eq!(prev, x);
            for passes in 1..=200 {
                let now: Vec<f32> = prev.iter().zip(&y).map(|(&x, &y)| chain.step(x, y)).collect();
                let same = now.iter().zip(&prev).filter(|(a, b)| a.to_bits() == b.to_bits()).count();
                assert!(same * 1000 < now.len(), "seed {seed}, pass {passes}: {same} unchanged");
                assert!(now.iter().all(|v| v.is_finite()));
                prev = now;
            }
            let bits = |v: Vec<f32>| v.into_iter().map(f32::to_bits).collect::<Vec<_>>();
            assert_eq!(bits(chain.reference_passes(&x, &y, 200)), bits(prev));
        }
    }

    #[test]
    fn the_threaded_reference_equals_one_element_at_a_time() {
        let chain = Chain::random(&mut Rng::new(11));
        let mut rng = Rng::new(12);
        let (x, y) = (rng.vec_f32(300_001, -4.0, 4.0), rng.vec_f32(300_001, -2.0, 2.0));
        let got = chain.reference_passes(&x, &y, 3);
        let bits: Vec<u32> = got.iter().map(|v| v.to_bits()).collect();
        let want: Vec<u32> = x
            .iter()
            .zip(&y)
            .map(|(&x, &y)| chain.step(chain.step(chain.step(x, y), y), y).to_bits())
            .collect();
        assert_eq!(bits, want);
    }

    #[test]
    fn byte_counts_follow_the_kernels() {
        assert_eq!(UNFUSED_BYTES_PER_ELEMENT, 56);
        assert_eq!(Variant::Fused.bytes_per_element(), 12);
        assert_eq!(Variant::Graph.kernels_per_pass(), OPS);
    }

    #[test]
    fn first_difference_compares_bits() {
        assert_eq!(first_difference(&[1.0, 2.0], &[1.0, 2.0]), None);
        assert_eq!(first_difference(&[1.0, 2.5], &[1.0, 2.0]), Some((1, 2.5, 2.0)));
        assert!(first_difference(&[0.0], &[-0.0]).is_some());
        assert!(first_difference(&[f32::NAN], &[f32::NAN]).is_none());
    }
}

/// The kernels declared in this file against their C++ parameter types (`check_types` needs
/// no GPU: it reads the signature functions cuda-build compiled next to the kernels).
#[cfg(test)]
mod kernel_declarations {
    use super::*;

    #[test]
    fn match_the_cpp_parameter_types() {
        chapter_common::assert_kernel_types! {
            kf_scale, kf_add, kf_clamp, kf_shift, kf_sqrt, kf_affine, kf_fused
        }
    }
}
