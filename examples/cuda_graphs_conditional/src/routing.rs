//! Routing one input per launch through IF, IF/ELSE (with an IF nested in its "then" body) and
//! a four-way SWITCH, every condition set on the device from a bit field of the input; the
//! bodies record which of them ran, and a CPU model says which should have.

use chapter_common::Rng;
use cuda_graph::graph::{Graph, GraphExec, HostLaunch};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{ConditionalHandle, DeviceBuffer, DevicePtr, Event, Result, Stream};

// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu); the declarations are private to this crate, whose launches pass counts
// no larger than the buffers they point into.
cuda_graph::kernels! {
    /// Sets `handle` to `(inputs[*cursor] >> shift) & mask` (one thread).
    unsafe fn cgc_set_field(handle: ConditionalHandle, inputs: DevicePtr<u32>, cursor: DevicePtr<u32>, shift: u32, mask: u32);
    /// Records that `body` ran: `trace[*cursor] |= 1 << body`, `counters[body] += 1`.
    unsafe fn cgc_mark(trace: DevicePtr<u32>, counters: DevicePtr<u32>, cursor: DevicePtr<u32>, body: u32);
    /// `*cursor += 1`: on to the next input.
    unsafe fn cgc_advance(cursor: DevicePtr<u32>);
}

/// The bodies, by the bit each sets in an input's trace (and its counter's index).
pub const BODIES: [&str; 8] =
    ["if", "if_else_then", "if_else_else", "switch_0", "switch_1", "switch_2", "switch_3", "nested_if"];

/// Bodies of the SWITCH node; its 3-bit field also takes values past the last (no body runs).
pub const SWITCH_CASES: u32 = 4;

/// Bits of an input the graph reads: bit 0 (IF), bit 1 (IF/ELSE), bits 2-4 (SWITCH, 0..=7),
/// bit 5 (the IF nested in the "then" body).
pub const FIELD_BITS: u32 = 6;

/// The CPU model: the bodies that run for `input`, as a bit set over [`BODIES`].
///
/// ```
/// use cuda_graphs_conditional::routing::expected_bodies;
/// // bit 0: IF; bit 1 set: "then", and bit 5 set: the nested IF; bits 2-4 = 2: case 2
/// assert_eq!(expected_bodies(0b10_1011), 0b1010_0011);
/// // nothing set: "else" and case 0
/// assert_eq!(expected_bodies(0), 0b0000_1100);
/// // SWITCH value 6: past the last case, no case runs
/// assert_eq!(expected_bodies(6 << 2), 0b0000_0100);
/// ```
pub fn expected_bodies(input: u32) -> u32 {
    let mut ran = 0;
    if input & 1 != 0 {
        ran |= 1 << 0;
    }
    if (input >> 1) & 1 != 0 {
        ran |= 1 << 1;
        if (input >> 5) & 1 != 0 {
            ran |= 1 << 7;
        }
    } else {
        ran |= 1 << 2;
    }
    let case = (input >> 2) & 7;
    if case < SWITCH_CASES {
        ran |= 1 << (3 + case);
    }
    ran
}

/// `count` seeded inputs: first every combination of the fields (while there is room), with
/// random bits above them, then random values.
pub fn make_inputs(count: usize, seed: u64) -> Vec<u32> {
    let mut rng = Rng::new(seed ^ 0x0c0d_e5e1);
    (0..count)
        .map(|i| {
            let high = (rng.next_u64() as u32) << FIELD_BITS;
            if i < 1 << FIELD_BITS {
                high | i as u32
            } else {
                rng.next_u64() as u32
            }
        })
        .collect()
}

/// What one pass over the inputs left on the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Routed {
    /// For each input, the bodies that ran (bits over [`BODIES`]).
    pub trace: Vec<u32>,
    /// How often each body ran.
    pub counters: Vec<u32>,
    /// Inputs the graph moved past (its last node's count).
    pub cursor: u32,
}

impl Routed {
    /// What the CPU model says for `inputs`.
    pub fn expected(inputs: &[u32]) -> Routed {
        let trace: Vec<u32> = inputs.iter().map(|&x| expected_bodies(x)).collect();
        let counters = (0..BODIES.len())
            .map(|body| trace.iter().filter(|&&t| t & (1 << body) != 0).count() as u32)
            .collect();
        Routed { trace, counters, cursor: inputs.len() as u32 }
    }

    /// The first difference from `want`, described.
    pub fn difference(&self, want: &Routed, inputs: &[u32]) -> Option<String> {
        if self.cursor != want.cursor {
            return Some(format!("the graph ran {} times, want {}", self.cursor, want.cursor));
        }
        if let Some(i) = self.trace.iter().zip(&want.trace).position(|(a, b)| a != b) {
            return Some(format!(
                "input {i} ({:#08b} in its fields): bodies {} ran, want {}",
                inputs[i] & ((1 << FIELD_BITS) - 1),
                names(self.trace[i]),
                names(want.trace[i])
            ));
        }
        if self.counters != want.counters {
            return Some(format!("counters {:?}, want {:?}", self.counters, want.counters));
        }
        None
    }
}

/// The names of the bodies in a bit set, `a+b`, or `none`.
pub fn names(set: u32) -> String {
    let list: Vec<&str> =
        BODIES.iter().enumerate().filter(|(bit, _)| set & (1 << bit) != 0).map(|(_, name)| *name).collect();
    if list.is_empty() {
        "none".into()
    } else {
        list.join("+")
    }
}

/// The routing graph over device-resident inputs, and the buffers its bodies write.
pub struct RoutingBench {
    stream: Stream,
    cursor: DeviceBuffer<u32>,
    trace: DeviceBuffer<u32>,
    counters: DeviceBuffer<u32>,
    start: Event,
    end: Event,
    exec: GraphExec<HostLaunch>,
    inputs: usize,
}

impl RoutingBench {
    /// Uploads `inputs` and builds the graph:
    ///
    /// ```text
    /// set(bit 0)     -> IF        { mark if }                                          \
    /// set(bit 1)     -> IF/ELSE   { mark then -> set(bit 5) -> IF { mark nested_if } }  > advance
    ///                             { mark else }                                        |
    /// set(bits 2-4)  -> SWITCH(4) { mark switch_0 } ... { mark switch_3 }              /
    /// ```
    ///
    /// Handles start each launch at a value the setters then replace (0 for IF and IF/ELSE,
    /// past the last case for SWITCH), so a setter that did not run shows as a wrong body.
    pub fn new(inputs: &[u32]) -> Result<RoutingBench> {
        let values = DeviceBuffer::from_slice(inputs)?;
        let cursor = DeviceBuffer::<u32>::zeroed(1)?;
        let trace = DeviceBuffer::<u32>::zeroed(inputs.len())?;
        let counters = DeviceBuffer::<u32>::zeroed(BODIES.len())?;
        let one = LaunchConfig::new(1u32, 1u32);
        let set = |handle: ConditionalHandle, shift: u32, mask: u32| {
            (handle, values.ptr(), cursor.ptr(), shift, mask)
        };
        let mark = |body: u32| (trace.ptr(), counters.ptr(), cursor.ptr(), body);

        let graph = Graph::new()?;
        let if_handle = graph.conditional_handle(Some(0))?;
        let set_if = graph.add_kernel(cgc_set_field(), one, set(if_handle, 0, 1), &[])?;
        let (if_node, if_body) = graph.add_if(&if_handle, &[&set_if])?;
        if_body.add_kernel(cgc_mark(), one, mark(0), &[])?;

        let if_else_handle = graph.conditional_handle(Some(0))?;
        let set_if_else = graph.add_kernel(cgc_set_field(), one, set(if_else_handle, 1, 1), &[])?;
        let (if_else_node, [then, otherwise]) = graph.add_if_else(&if_else_handle, &[&set_if_else])?;
        let mark_then = then.add_kernel(cgc_mark(), one, mark(1), &[])?;
        // The nested IF: its handle belongs to the body it is used in, and so does its setter.
        let nested_handle = then.conditional_handle(Some(0))?;
        let set_nested = then.add_kernel(cgc_set_field(), one, set(nested_handle, 5, 1), &[&mark_then])?;
        let (_nested, nested_body) = then.add_if(&nested_handle, &[&set_nested])?;
        nested_body.add_kernel(cgc_mark(), one, mark(7), &[])?;
        otherwise.add_kernel(cgc_mark(), one, mark(2), &[])?;

        let switch_handle = graph.conditional_handle(Some(7))?;
        let set_switch = graph.add_kernel(cgc_set_field(), one, set(switch_handle, 2, 7), &[])?;
        let (switch_node, cases) = graph.add_switch(&switch_handle, SWITCH_CASES as usize, &[&set_switch])?;
        for (case, body) in (0u32..).zip(&cases) {
            body.add_kernel(cgc_mark(), one, mark(3 + case), &[])?;
        }

        graph.add_kernel(cgc_advance(), one, (cursor.ptr(),), &[&if_node, &if_else_node, &switch_node])?;
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        Ok(RoutingBench {
            stream: Stream::new()?,
            cursor,
            trace,
            counters,
            start: Event::new()?,
            end: Event::new()?,
            exec,
            inputs: inputs.len(),
        })
    }

    /// Clears what the bodies write, launches the graph once per input back to back (the
    /// device moves from input to input), and returns what the bodies recorded and the time
    /// per launch in ms (events around all the launches).
    pub fn run(&mut self) -> Result<(Routed, f64)> {
        self.cursor.memset_async(0, &self.stream)?;
        self.trace.memset_async(0, &self.stream)?;
        self.counters.memset_async(0, &self.stream)?;
        self.start.record(&self.stream)?;
        for _ in 0..self.inputs {
            self.exec.launch(&self.stream)?;
        }
        self.end.record(&self.stream)?;
        self.end.synchronize()?;
        let ms = f64::from(Event::elapsed_ms(&self.start, &self.end)?) / self.inputs.max(1) as f64;
        let routed = Routed {
            trace: self.trace.to_vec()?,
            counters: self.counters.to_vec()?,
            cursor: self.cursor.to_vec()?[0],
        };
        Ok((routed, ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_input_runs_one_if_else_body_and_at_most_one_case() {
        for input in 0..1u32 << FIELD_BITS {
            let ran = expected_bodies(input);
            assert_eq!(((ran >> 1) & 1) + ((ran >> 2) & 1), 1, "input {input:#b}");
            assert!(((ran >> 3) & 0xf).count_ones() <= 1);
            assert_eq!(ran & (1 << 7) != 0, input & 0b10_0010 == 0b10_0010, "nested IF only inside then");
        }
    }

    #[test]
    fn inputs_cover_every_path_first() {
        let inputs = make_inputs(100, 3);
        let mut fields: Vec<u32> = inputs[..64].iter().map(|x| x & 63).collect();
        fields.sort_unstable();
        assert_eq!(fields, (0..64).collect::<Vec<_>>());
        assert_eq!(make_inputs(100, 3), inputs);
        let expected = Routed::expected(&inputs);
        assert!(expected.counters.iter().all(|&c| c > 0), "{:?}", expected.counters);
    }

    #[test]
    fn a_wrong_body_is_named() {
        let inputs = [0b11u32, 0];
        let want = Routed::expected(&inputs);
        let mut got = want.clone();
        got.trace[0] ^= 1 << 7;
        let message = got.difference(&want, &inputs).unwrap();
        assert!(message.contains("nested_if"), "{message}");
        assert_eq!(names(0), "none");
    }
}

/// The kernels declared in this file against their C++ parameter types (`check_types` needs
/// no GPU: it reads the signature functions cuda-build compiled next to the kernels).
#[cfg(test)]
mod kernel_declarations {
    use super::*;

    #[test]
    fn match_the_cpp_parameter_types() {
        chapter_common::assert_kernel_types! { cgc_set_field, cgc_mark, cgc_advance }
    }
}
