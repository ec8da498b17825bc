// Device-runtime limits measured on CUDA 13.0 (driver 580, H100), shared by device code and
// the Rust side (cudadevrt-sys checks that its constants equal these numbers).
#pragma once

// Distinct graphs one launching kernel may fire-and-forget (sibling launches count too);
// the next device cudaGraphLaunch returns cudaErrorInvalidValue.
#define CUDADEVRT_FIRE_AND_FORGET_LIMIT 120
// Graphs one launching kernel may tail-launch; the next returns cudaErrorInvalidValue.
#define CUDADEVRT_TAIL_LAUNCH_LIMIT 255
// Default of cudaLimitDevRuntimePendingLaunchCount: CDP launches buffered before launches fail
// with cudaErrorLaunchPendingCountExceeded.
#define CUDADEVRT_DEFAULT_PENDING_LAUNCH_COUNT 2048
