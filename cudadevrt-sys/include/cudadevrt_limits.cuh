// Device-runtime limits measured on CUDA 13.0 (driver 580, H100): their one definition for
// device code (device_launch.cuh includes this header). The Rust constants of cudadevrt-sys
// are checked to equal these numbers by that crate's tests.
#pragma once

// Distinct graphs one launching kernel may fire-and-forget (sibling launches count too);
// the next device cudaGraphLaunch returns cudaErrorInvalidValue.
#define CUDADEVRT_FIRE_AND_FORGET_LIMIT 120
// Graphs one launching kernel may tail-launch; the next returns cudaErrorInvalidValue.
#define CUDADEVRT_TAIL_LAUNCH_LIMIT 255
// Default of cudaLimitDevRuntimePendingLaunchCount: CDP launches buffered before launches fail
// with cudaErrorLaunchPendingCountExceeded.
#define CUDADEVRT_DEFAULT_PENDING_LAUNCH_COUNT 2048
