//! Which GPU and driver the figures came from, for the CSV header and the results README.

use cuda_graph::{sys, Device};

use crate::error::Result;

/// The device and software a run measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The device's name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// Compute capability, e.g. `(9, 0)`.
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors.
    pub multiprocessors: i32,
    /// The NVIDIA driver's version (`/proc/driver/nvidia/version`), when readable.
    pub driver: Option<String>,
    /// The CUDA version the driver supports (`cudaDriverGetVersion`), e.g. `13.0`.
    pub driver_cuda: String,
    /// The CUDA runtime linked into this program (`cudaRuntimeGetVersion`).
    pub runtime_cuda: String,
}

impl DeviceInfo {
    /// Reads it for `device`.
    pub fn query(device: Device) -> Result<DeviceInfo> {
        let props = device.properties()?;
        let (mut driver_version, mut runtime_version) = (0, 0);
        // SAFETY: a valid, writable int.
        let status = unsafe { sys::cudaDriverGetVersion(&mut driver_version) };
        cuda_status(status, "cudaDriverGetVersion")?;
        // SAFETY: a valid, writable int.
        let status = unsafe { sys::cudaRuntimeGetVersion(&mut runtime_version) };
        cuda_status(status, "cudaRuntimeGetVersion")?;
        let driver =
            std::fs::read_to_string("/proc/driver/nvidia/version").ok().and_then(|text| nvidia_driver(&text));
        Ok(DeviceInfo {
            name: props.name,
            compute_capability: (props.major, props.minor),
            multiprocessors: props.multiprocessors,
            driver,
            driver_cuda: cuda_version(driver_version),
            runtime_cuda: cuda_version(runtime_version),
        })
    }

    /// One line: `NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)`.
    pub fn device_line(&self) -> String {
        let (major, minor) = self.compute_capability;
        format!("{} (sm_{major}{minor}, {} SMs)", self.name, self.multiprocessors)
    }

    /// One line: `driver 580.65.06 (CUDA 13.0), runtime CUDA 13.0`.
    pub fn driver_line(&self) -> String {
        let driver = self.driver.as_deref().unwrap_or("version unknown");
        format!("driver {driver} (CUDA {}), runtime CUDA {}", self.driver_cuda, self.runtime_cuda)
    }
}

fn cuda_status(status: sys::cudaError_t, call: &'static str) -> Result<()> {
    if status == sys::cudaError::cudaSuccess {
        Ok(())
    } else {
        Err(cuda_graph::CudaError::from_code(status.0 as i32, call).into())
    }
}

/// `13000` → `13.0`, `12080` → `12.8`.
pub fn cuda_version(encoded: i32) -> String {
    format!("{}.{}", encoded / 1000, (encoded % 1000) / 10)
}

/// The version in `/proc/driver/nvidia/version`'s first line: the first word after "Kernel
/// Module" that starts with a digit.
pub fn nvidia_driver(text: &str) -> Option<String> {
    let line = text.lines().next()?;
    let rest = &line[line.find("Kernel Module")? + "Kernel Module".len()..];
    rest.split_whitespace().find(|word| word.starts_with(|c: char| c.is_ascii_digit())).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_decode() {
        assert_eq!(cuda_version(13000), "13.0");
        assert_eq!(cuda_version(12080), "12.8");
        let proc_text = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build  \
                         (dvs-builder@U16-I3-B03-4-3)  Sun Jul 27 06:54:38 UTC 2025\nGCC version: gcc 12\n";
        assert_eq!(nvidia_driver(proc_text).as_deref(), Some("580.65.06"));
        let closed =
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024";
        assert_eq!(nvidia_driver(closed).as_deref(), Some("550.54.15"));
        assert_eq!(nvidia_driver("nothing here"), None);
    }

    #[test]
    fn the_lines_name_the_device_and_the_driver() {
        let info = DeviceInfo {
            name: "NVIDIA H100 80GB HBM3".into(),
            compute_capability: (9, 0),
            multiprocessors: 132,
            driver: Some("580.65.06".into()),
            driver_cuda: "13.0".into(),
            runtime_cuda: "13.0".into(),
        };
        assert_eq!(info.device_line(), "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)");
        assert_eq!(info.driver_line(), "driver 580.65.06 (CUDA 13.0), runtime CUDA 13.0");
        let unknown = DeviceInfo { driver: None, ..info };
        assert!(unknown.driver_line().starts_with("driver version unknown (CUDA 13.0)"));
    }
}
