//! The host-driven loops: the host walks the items in queue order and launches the graph of
//! each item's kind, one host graph launch per item, synchronizing once at the end of the
//! drain. On one stream every launch waits for the previous one; over `host_streams`
//! streams (round-robin) up to that many item graphs run at once, as the scheduler's do.

use chapter_common::ExampleError;
use cuda_graph::graph::{Graph, GraphExec, HostLaunch};
use cuda_graph::{CudaError, Event, Stream};

use crate::kernels::ps_item;
use crate::{Bench, Outcome};

/// Every kind's graph instantiated for host launch, once per stream: CUDA orders a launch of
/// an exec behind its previous launch whatever the stream, so concurrent launches need
/// separate execs.
pub(crate) struct HostGraphs {
    /// `[stream][kind]`.
    execs: Vec<Vec<GraphExec<HostLaunch>>>,
    /// The extra streams (the first is the bench's own) and an event each to join them.
    streams: Vec<(Stream, Event)>,
}

impl Bench {
    /// The host loops' graphs and streams.
    pub(crate) fn host_graphs(&self) -> Result<HostGraphs, CudaError> {
        let execs = (0..self.options.host_streams)
            .map(|_| {
                (0..self.options.kinds)
                    .map(|kind| {
                        let graph = Graph::new()?;
                        graph.add_kernel(ps_item(), self.item_config(), self.item_args(kind), &[])?;
                        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
                        exec.upload(&self.stream)?;
                        Ok(exec)
                    })
                    .collect::<Result<Vec<_>, CudaError>>()
            })
            .collect::<Result<Vec<_>, CudaError>>()?;
        let streams = (1..self.options.host_streams)
            .map(|_| Ok((Stream::new()?, Event::new()?)))
            .collect::<Result<Vec<_>, CudaError>>()?;
        Ok(HostGraphs { execs, streams })
    }

    /// A host-driven loop: one graph launch per item, in queue order, on one stream
    /// (`multi_stream` false) or round-robin over all `host_streams` streams.
    pub(crate) fn run_host(
        &mut self, graphs: &HostGraphs, multi_stream: bool,
    ) -> Result<Outcome, ExampleError> {
        self.reset()?;
        // The lists the graphs read, ready before timing starts (a favour to the host loops:
        // the scheduler builds its lists on the device, inside its timed run).
        self.lists.copy_from_host(&self.host_lists)?;
        self.counters.copy_from_host(&self.host_counters)?;
        self.start.record(&self.stream)?;
        let extra: &[(Stream, Event)] = if multi_stream { &graphs.streams } else { &[] };
        for (stream, _) in extra {
            stream.wait_event(&self.start)?;
        }
        let lanes = 1 + extra.len();
        for (n, &item) in self.items.order.iter().enumerate() {
            let kind = self.items.kinds[item as usize] as usize;
            let lane = n % lanes;
            let stream = if lane == 0 { &self.stream } else { &extra[lane - 1].0 };
            graphs.execs[lane][kind].launch(stream)?;
        }
        for (stream, done) in extra {
            done.record(stream)?;
            self.stream.wait_event(done)?;
        }
        self.end.record(&self.stream)?;
        let mut outcome = self.finish()?;
        outcome.launched = self.items.len() as u64;
        Ok(outcome)
    }
}
