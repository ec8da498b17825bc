/* The CUDA runtime API that cudart-graph-sys binds: streams, events, memory and pools,
 * graphs with every node kind and conditional nodes, instantiate/upload/launch/update,
 * capture, device limits, driver entry points and function lookup. */
#include <cuda_runtime_api.h>
