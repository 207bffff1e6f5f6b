"""Devices: the Device protocol, SimDevice (CPU emulation) and CudaDevice (CuPy + pynvml)."""
from prover.device.base import Buffer, Device, DeviceError, Kernel, OomError, Stopped, Stream
from prover.device.profiles import PROFILES, Profile, get_profile, register_profile

__all__ = ["Buffer", "Device", "DeviceError", "Kernel", "OomError", "Stopped", "Stream",
           "PROFILES", "Profile", "get_profile", "register_profile"]
