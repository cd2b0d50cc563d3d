// Anchors libtg.so; its version is what `tg --version` prints.
namespace tg {
const char* core_version() { return "0.1.0"; }
} // namespace tg
