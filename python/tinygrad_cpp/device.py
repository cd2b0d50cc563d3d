"""Device names, the default device, and plugins loaded at run time."""
from tinygrad_cpp import _core


class _Device:
  """tinygrad's Device: Device.DEFAULT reads or sets the default device ("CPU", "CUDA:1", "MY")."""

  @property
  def DEFAULT(self) -> str: return _core.default_device()

  @DEFAULT.setter
  def DEFAULT(self, name: str): _core.set_default_device(name)

  def canonicalize(self, device) -> str:
    return _core.default_device() if device is None else _core.canonical_device(device)

  def __getitem__(self, name: str) -> dict:
    """Opens the device and returns its properties (name, vendor, arch, plugin, memory_bytes, host_memory)."""
    return _core.open_device(name)

  def __repr__(self) -> str: return f"<Device DEFAULT={self.DEFAULT}>"


Device = _Device()


def devices(available_only: bool = True) -> list:
  """Every device the plugins can open ("CPU", "CUDA:0", ...). With available_only=False, one dict per
  plugin found: {"plugin", "devices", "error"} (error says why a plugin has no devices)."""
  entries = _core.list_devices()
  if not available_only: return entries
  return [d for e in entries for d in e["devices"]]


def load_plugin(path: str) -> str:
  """Loads a device plugin (libtg_device_<name>.so) and returns its name; its devices are then "<NAME>",
  "<NAME>:1", ... Raises PluginLoadError with the reason when the file is not a usable plugin."""
  return _core.load_plugin(str(path))


def unload_plugin(name: str) -> bool:
  return _core.unload_plugin(name)
