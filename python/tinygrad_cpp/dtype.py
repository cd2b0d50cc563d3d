"""tinygrad's dtypes namespace over the core's DType."""
from tinygrad_cpp._core import DType

_n = DType.from_name


class dtypes:
  bool = _n("bool")
  int8, uint8, int16, uint16 = _n("int8"), _n("uint8"), _n("int16"), _n("uint16")
  int32, uint32, int64, uint64 = _n("int32"), _n("uint32"), _n("int64"), _n("uint64")
  float16, bfloat16, float32, float64 = _n("float16"), _n("bfloat16"), _n("float32"), _n("float64")
  char, uchar, short, ushort, int, uint, long, ulong = int8, uint8, int16, uint16, int32, uint32, int64, uint64
  half, float, double = float16, float32, float64
  default_float, default_int = float32, int32
  fp16, bf16, fp32 = float16, bfloat16, float32

  @staticmethod
  def is_float(x: DType) -> "bool": return x.is_float()
  @staticmethod
  def is_int(x: DType) -> "bool": return x.is_int()
  @staticmethod
  def is_unsigned(x: DType) -> "bool": return x.is_unsigned()
  @staticmethod
  def is_bool(x: DType) -> "bool": return x.is_bool()
  @staticmethod
  def from_np(x) -> DType: return DType.from_name(__import__("numpy").dtype(x).name)
  @staticmethod
  def least_upper_dtype(*ds: DType) -> DType:
    out = ds[0]
    for d in ds[1:]: out = DType.least_upper(out, d)
    return out
  @staticmethod
  def all():
    return [dtypes.bool, dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32,
            dtypes.int64, dtypes.uint64, dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64]
