//===- State.cpp - parameters and buffers on export -----------------------===//

#include "State.h"
#include "Conversion.h"

#include "composer/Support/StatePaths.h"

#include "mlir/IR/Diagnostics.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/xxhash.h"

#include <unistd.h>

using namespace mlir;
using namespace composer;
namespace jit = torch::jit;

namespace {

/// The leading singular triplets of a weight W reshaped to (out, fan_in),
/// W ~ U S V^T, in float64 (computeTruncatedSvd).
struct Svd {
  at::Tensor u, s, vh;
};
using SvdCache = llvm::StringMap<Svd>;

class StateSync {
public:
  explicit StateSync(jit::Module &model) : model(model) {}

  LogicalResult declare(Operation *decl, StringRef key, bool isParameter,
                        bool frozen, bool channelsLast, Attribute initializer,
                        Type type);

private:
  FailureOr<jit::Module> ownModule(StringRef path, Location loc);
  jit::Module unshare(jit::Module &parent, const std::string &name);

  jit::Module &model;
  /// Modules on paths already given their own type, by path.
  llvm::StringMap<jit::Module> owned;
  /// SVDs of the weights factors are initialized from, by state_dict key.
  SvdCache svds;
  /// Bytes of the new parameters and buffers so far.
  uint64_t newStateBytes = 0;
};

/// Physical memory: new state beyond it would end in the OOM killer.
uint64_t getPhysicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return UINT64_MAX;
  return uint64_t(pages) * uint64_t(pageSize);
}

/// Checks that a new `declared` tensor fits in memory with the `total`
/// bytes of new state before it (a pass option of 10^12 channels gives a
/// valid IR shape no machine can hold), and adds it to `total`.
LogicalResult reserveNewState(StringRef key, TorchTensorType declared,
                              c10::ScalarType dtype, uint64_t &total,
                              Location loc) {
  uint64_t bytes = c10::elementSize(dtype);
  // Saturating steps each reset their flag.
  bool overflow = false, stepOverflow = false;
  for (int64_t size : declared.getSizes()) {
    bytes = llvm::SaturatingMultiply(bytes, uint64_t(size), &stepOverflow);
    overflow |= stepOverflow;
  }
  uint64_t before = total;
  total = llvm::SaturatingAdd(before, bytes, &stepOverflow);
  overflow |= stepOverflow;
  uint64_t memory = getPhysicalMemoryBytes();
  if (!overflow && total <= memory)
    return success();
  auto gigabytes = [](uint64_t n) {
    std::string text;
    llvm::raw_string_ostream(text) << llvm::format("%.3g GB", n / 1e9);
    return text;
  };
  InFlightDiagnostic diag = emitError(loc, "new '")
                            << key << "' " << declared << " needs ";
  if (overflow)
    diag << "more bytes than 64 bits count";
  else
    diag << gigabytes(bytes);
  if (before)
    diag << " besides the " << gigabytes(before) << " of new state before it";
  diag << ", more than this machine's memory (" << gigabytes(memory) << ")";
  return diag;
}

/// A copy of `old` with a class type of its own: same attributes (the same
/// objects and tensors), constants and methods.
jit::Module cloneInstanceWithOwnType(const jit::Module &old) {
  c10::ClassTypePtr oldType = old.type();
  jit::Module fresh(*oldType->name(), old._ivalue()->compilation_unit(),
                    /*shouldMangle=*/true);
  for (size_t i = 0; i < oldType->numAttributes(); ++i)
    fresh.register_attribute(oldType->getAttributeName(i),
                             oldType->getAttribute(i),
                             old._ivalue()->getSlot(i),
                             oldType->is_parameter(i), oldType->is_buffer(i));
  for (const std::string &name : oldType->constantNames())
    fresh.type()->addConstant(name, oldType->getConstant(name));
  for (jit::Function *method : oldType->methods())
    fresh.clone_method(old, method->name());
  return fresh;
}

jit::Module StateSync::unshare(jit::Module &parent, const std::string &name) {
  jit::Module fresh = cloneInstanceWithOwnType(parent.attr(name).toModule());
  parent.type()->unsafeChangeAttributeType(name, fresh.type());
  parent._ivalue()->setAttr(name, fresh._ivalue());
  return fresh;
}

// The root is the export's own clone; every module below it on `path` is
// given its own type, or created empty if it does not exist.
FailureOr<jit::Module> StateSync::ownModule(StringRef path, Location loc) {
  if (path.empty())
    return model;
  auto it = owned.find(path);
  if (it != owned.end())
    return it->second;
  auto [parentPath, name] = splitAttrPath(path);
  FailureOr<jit::Module> parent = ownModule(parentPath, loc);
  if (failed(parent))
    return failure();
  std::string attr = name.str();
  jit::Module child;
  if (!parent->hasattr(attr)) {
    child = jit::Module(c10::QualifiedName("__torch__.composer.Container"),
                        model._ivalue()->compilation_unit(),
                        /*shouldMangle=*/true);
    child.register_attribute("training", c10::BoolType::get(),
                             parent->is_training());
    parent->register_module(attr, child);
  } else if (parent->attr(attr).isModule()) {
    child = unshare(*parent, attr);
  } else {
    return emitError(loc, "cannot add state under '")
           << path << "': it is an attribute, not a submodule";
  }
  return owned[path] = child;
}

/// The tensor in channels_last memory format if its declaration asks for it,
/// back in the default format if it no longer does; otherwise (other
/// layouts included) the same tensor.
at::Tensor inMemoryFormat(const at::Tensor &tensor, bool channelsLast) {
  bool isChannelsLast = tensor.dim() == 4 && !tensor.is_contiguous() &&
                        tensor.is_contiguous(at::MemoryFormat::ChannelsLast);
  if (tensor.dim() != 4 || channelsLast == isChannelsLast ||
      (!channelsLast && !isChannelsLast))
    return tensor;
  at::MemoryFormat format = channelsLast ? at::MemoryFormat::ChannelsLast
                                         : at::MemoryFormat::Contiguous;
  at::Tensor converted = tensor.detach().contiguous(format);
  converted.set_requires_grad(tensor.requires_grad());
  return converted;
}

/// The fan-in of nn.Linear's initialization named `kind` for `shape`:
/// "linear_default" for a 2-D weight (its size(1)), "linear_default:N" for
/// any shape (a bias, whose layer's fan-in its shape does not tell); nullopt
/// for any other kind.
std::optional<int64_t> getLinearInitFanIn(StringRef kind,
                                          ArrayRef<int64_t> shape) {
  if (!kind.consume_front("linear_default"))
    return std::nullopt;
  if (kind.empty())
    return shape.size() == 2 ? std::optional<int64_t>(shape[1]) : std::nullopt;
  int64_t fanIn;
  if (!kind.consume_front(":") || kind.getAsInteger(10, fanIn) || fanIn <= 0)
    return std::nullopt;
  return fanIn;
}

/// The tensor at state_dict `key` in `model`, if there is one.
std::optional<at::Tensor> lookupModelTensor(jit::Module &model, StringRef key) {
  auto [modulePath, name] = splitAttrPath(key);
  jit::Module owner = model;
  SmallVector<StringRef> parts;
  if (!modulePath.empty())
    modulePath.split(parts, '.');
  for (StringRef part : parts) {
    if (!owner.hasattr(part.str()) || !owner.attr(part.str()).isModule())
      return std::nullopt;
    owner = owner.attr(part.str()).toModule();
  }
  if (!owner.hasattr(name.str()) || !owner.attr(name.str()).isTensor())
    return std::nullopt;
  return owner.attr(name.str()).toTensor();
}

/// The `rank` leading singular triplets of `matrix` (m x n), in float64,
/// each pair's sign fixed so that the largest entry of U's column is
/// positive (LAPACK's signs are arbitrary; fixed, a reference computing the
/// same SVD gets the same factors).
///
/// From the eigendecomposition of the smaller Gram matrix (W W^T if m <= n):
/// U_r, then V_r = W^T U_r / S_r. One threaded matrix product and a k x k
/// eigensolver (k = min(m, n)) replace LAPACK's SVD of the whole matrix,
/// which on a 4096 x 25088 classifier took minutes. U_r U_r^T W is W's
/// projection on U_r, so the pair reproduces W exactly at full rank however
/// the small singular values round; dividing by them is what needs them
/// accurate, so a matrix whose r-th singular value is below 1e-6 of the
/// largest (squared, under float64's precision) takes the full SVD.
Svd computeTruncatedSvd(const at::Tensor &matrix, int64_t rank) {
  at::Tensor w = matrix.to(at::kDouble);
  bool wide = w.size(0) <= w.size(1);
  at::Tensor gram = wide ? w.mm(w.t()) : w.t().mm(w);
  auto [eigenvalues, eigenvectors] = at::linalg_eigh(gram);
  // Descending, the leading `rank`.
  at::Tensor s = eigenvalues.flip(0).slice(0, 0, rank).clamp_min(0).sqrt();
  at::Tensor basis = eigenvectors.flip(1).slice(1, 0, rank);
  double largest = s[0].item<double>();
  at::Tensor u, vh;
  if (largest > 0 && s[rank - 1].item<double>() > 1e-6 * largest) {
    at::Tensor other = (wide ? w.t().mm(basis) : w.mm(basis)) / s;
    u = wide ? basis : other;
    vh = (wide ? other : basis).t();
  } else {
    // On one thread: LAPACK's SVD makes many small BLAS calls, each an
    // OpenMP region whose barrier spins when cores are busy (16x slower on
    // 2 loaded cores for a 512x4608 weight).
    struct OneThread {
      int saved = at::get_num_threads();
      OneThread() { at::set_num_threads(1); }
      ~OneThread() { at::set_num_threads(saved); }
    } oneThread;
    auto [fullU, fullS, fullVh] = at::linalg_svd(w, /*full_matrices=*/false);
    u = fullU.slice(1, 0, rank);
    s = fullS.slice(0, 0, rank);
    vh = fullVh.slice(0, 0, rank);
  }
  at::Tensor peak = u.gather(0, u.abs().argmax(0).unsqueeze(0));
  at::Tensor signs = at::where(peak < 0, -1.0, 1.0);
  return Svd{u * signs, s, vh * signs.t()};
}

/// "svd_first:<source>" / "svd_second:<source>": a factor of the best
/// rank-r approximation of the model's tensor `source`, W (out, fan_in) =
/// U S V^T: sqrt(S_r) V_r^T shaped (r, W's other dims) or U_r sqrt(S_r)
/// shaped (out, r, 1...), r read from the declared shape. The pair computes
/// W exactly at r = min(out, fan_in). `transposed`: W is the source's
/// transpose (a 2-D source stored [in, out]).
FailureOr<at::Tensor> materializeSvdFactor(StringRef key, bool first,
                                           bool transposed, StringRef source,
                                           TorchTensorType declared,
                                           c10::ScalarType dtype,
                                           jit::Module &model, SvdCache &svds,
                                           Location loc) {
  std::optional<at::Tensor> weight = lookupModelTensor(model, source);
  if (!weight || !weight->is_floating_point() || weight->dim() < 2 ||
      weight->numel() == 0 || (transposed && weight->dim() != 2))
    return emitError(loc, "'")
           << key << "': SVD source '" << source
           << "' is not a non-empty floating-point tensor of "
           << (transposed ? "2" : "2 or more") << " dimensions in the model";
  if (transposed)
    weight = weight->t();
  int64_t out = weight->size(0);
  int64_t fanIn = weight->numel() / out;
  ArrayRef<int64_t> shape = declared.getSizes();
  int64_t rank = shape.size() >= 2 ? shape[first ? 0 : 1] : 0;
  std::vector<int64_t> expected(weight->dim(), 1);
  if (first)
    expected = weight->sizes().vec();
  else
    expected[0] = out;
  expected[first ? 0 : 1] = rank;
  if (shape != ArrayRef<int64_t>(expected) || rank < 1 ||
      rank > std::min(out, fanIn))
    return emitError(loc, "'")
           << key << "' " << declared << " is not a rank-r "
           << (first ? "first" : "second") << " factor of '" << source << "' ("
           << ArrayRef<int64_t>(weight->sizes().vec())
           << "), 1 <= r <= " << std::min(out, fanIn);
  std::string cacheKey = (source + (transposed ? "^T" : "")).str();
  auto it = svds.find(cacheKey);
  if (it == svds.end() || it->second.s.size(0) < rank)
    it = svds.insert_or_assign(
                 cacheKey, computeTruncatedSvd(
                               weight->detach().reshape({out, fanIn}), rank))
             .first;
  const Svd &svd = it->second;
  at::Tensor root = svd.s.slice(0, 0, rank).sqrt();
  at::Tensor factor = first ? root.unsqueeze(1) * svd.vh.slice(0, 0, rank)
                            : svd.u.slice(1, 0, rank) * root.unsqueeze(0);
  return factor.reshape(shape.vec()).to(dtype).contiguous();
}

/// "dropout_mask:<p>": Composer's GyroDropout masks, `(rand(shape) >
/// p).float()`, drawn from a generator seeded by the name, so that exports
/// are reproducible.
FailureOr<at::Tensor> materializeDropoutMask(StringRef key, StringRef rate,
                                             const std::vector<int64_t> &shape,
                                             c10::ScalarType dtype,
                                             Location loc) {
  double p;
  if (rate.getAsDouble(p) || !(p >= 0.0 && p < 1.0))
    return emitError(loc, "'")
           << key << "': dropout_mask needs a rate in [0, 1), got '" << rate
           << "'";
  at::Generator generator =
      at::make_generator<at::CPUGeneratorImpl>(llvm::xxh3_64bits(key));
  return at::rand(shape, generator).gt(p).to(dtype);
}

/// The assumed values export checks (StatePaths.h), as StringRefs.
constexpr llvm::StringRef kTrilOnes = kTrilOnesInit;
constexpr llvm::StringRef kArange = kArangeInit;
constexpr llvm::StringRef kZeros = kZerosInit;

/// "tril_ones" (kTrilOnes): lower-triangular ones in the last two
/// dimensions, the same in every leading one (a causal mask).

FailureOr<at::Tensor> materializeTrilOnes(StringRef key,
                                          TorchTensorType declared,
                                          c10::ScalarType dtype, Location loc) {
  std::vector<int64_t> shape = declared.getSizes().vec();
  if (shape.size() < 2)
    return emitError(loc, "'")
           << key << "': \"tril_ones\" needs 2 or more dimensions, got "
           << declared;
  return at::ones({shape[shape.size() - 2], shape.back()},
                  at::TensorOptions().dtype(dtype))
      .tril()
      .expand(shape)
      .contiguous();
}

/// On state the model has, "tril_ones", "arange" and "zeros" are what a
/// pass assumed the tensor holds when it rewrote the graph (composer-alibi
/// builds a causal mask buffer's slices from the sequence length instead,
/// removes the embedding of a position-index buffer, and builds a
/// token-type buffer's slices as zeros of the sequence length): a tensor
/// that differs fails the export.
LogicalResult checkAssumedValue(StringRef key, const at::Tensor &tensor,
                                Attribute initializer, TorchTensorType declared,
                                Location loc) {
  auto kind = dyn_cast_or_null<StringAttr>(initializer);
  if (!kind || (kind.getValue() != kTrilOnes && kind.getValue() != kArange &&
                kind.getValue() != kZeros))
    return success();
  std::optional<c10::ScalarType> dtype = exportDtype(declared.getDtype());
  if (!dtype)
    return emitError(loc, "'") << key << "' has no tensor dtype";
  FailureOr<at::Tensor> expected = at::Tensor();
  if (kind.getValue() == kTrilOnes)
    expected = materializeTrilOnes(key, declared, *dtype, loc);
  else if (kind.getValue() == kZeros)
    expected = at::zeros(tensor.sizes(), at::TensorOptions().dtype(*dtype));
  else if (tensor.dim() >= 1)
    expected = at::arange(tensor.size(-1), at::TensorOptions().dtype(*dtype))
                   .expand(tensor.sizes());
  if (failed(expected))
    return failure();
  if (expected->defined() && tensor.sizes() == expected->sizes() &&
      at::equal(tensor.detach().to(*dtype), *expected))
    return success();
  StringRef holds = kind.getValue() == kTrilOnes
                        ? "lower-triangular ones (\"tril_ones\")"
                    : kind.getValue() == kZeros
                        ? "zeros (\"zeros\")"
                        : "0..N-1 along its last dimension (\"arange\")";
  return emitError(loc, "'")
         << key << "' does not hold " << holds
         << ", which a pass assumed when it rewrote the graph (composer-alibi "
            "builds causal masks and token types from the sequence length "
            "and removes embeddings of positions): the exported model would "
            "compute something else";
}

/// The tensor a new parameter or buffer starts as: a dense initializer
/// broadcast to the declared shape (a 1x1x3x3 blur filter for a Cx1x3x3
/// buffer, say), or "linear_default[:fan_in]", PyTorch's nn.Linear
/// initialization (uniform in +-1/sqrt(fan_in), weight and bias alike)
/// drawn from a generator seeded by the name, so that exports are
/// reproducible; or "svd_first:<key>" / "svd_second:<key>", a factor of
/// the SVD of `model`'s tensor <key> (materializeSvdFactor), of its
/// transpose with "svd_first_t" / "svd_second_t"; or
/// "dropout_mask:<p>" (materializeDropoutMask).
FailureOr<at::Tensor> materializeInitializer(StringRef key,
                                             Attribute initializer,
                                             TorchTensorType declared,
                                             jit::Module &model, SvdCache &svds,
                                             Location loc) {
  std::vector<int64_t> shape = declared.getSizes().vec();
  std::optional<c10::ScalarType> dtype = exportDtype(declared.getDtype());
  if (!dtype)
    return emitError(loc, "'") << key << "' has no tensor dtype";
  if (auto kind = dyn_cast_or_null<StringAttr>(initializer)) {
    if (kind.getValue() == kTrilOnes)
      return materializeTrilOnes(key, declared, *dtype, loc);
    if (kind.getValue() == kZeros)
      return at::zeros(shape, at::TensorOptions().dtype(*dtype));
    auto [svdKind, source] = kind.getValue().split(':');
    bool transposed = svdKind.consume_back("_t");
    if ((svdKind == "svd_first" || svdKind == "svd_second") && !source.empty())
      return materializeSvdFactor(key, svdKind == "svd_first", transposed,
                                  source, declared, *dtype, model, svds, loc);
    if (svdKind == "dropout_mask")
      return materializeDropoutMask(key, source, shape, *dtype, loc);
    std::optional<int64_t> fanIn = getLinearInitFanIn(kind.getValue(), shape);
    if (!fanIn)
      return emitError(loc, "'")
             << key << "': unknown initializer " << kind
             << " (expected \"linear_default\" for a 2-D weight or "
                "\"linear_default:<fan_in>\")";
    at::Generator generator =
        at::make_generator<at::CPUGeneratorImpl>(llvm::xxh3_64bits(key));
    double bound = 1.0 / std::sqrt(static_cast<double>(*fanIn));
    return at::empty(shape, at::TensorOptions().dtype(*dtype))
        .uniform_(-bound, bound, generator);
  }
  auto elements = dyn_cast_or_null<DenseElementsAttr>(initializer);
  if (!elements)
    return emitError(loc, "'")
           << key << "' is not in the model and has no initializer";
  std::string error;
  std::optional<c10::IValue> tensor =
      exportConstant(elements, c10::TensorType::get(), error);
  if (!tensor)
    return emitError(loc, "initializer of '") << key << "': " << error;
  at::Tensor value = tensor->toTensor();
  if (!at::is_expandable_to(value.sizes(), shape))
    return emitError(loc, "initializer of '")
           << key << "' does not broadcast to the declared shape " << declared;
  return value.expand(shape).contiguous();
}

LogicalResult StateSync::declare(Operation *decl, StringRef key,
                                 bool isParameter, bool frozen,
                                 bool channelsLast, Attribute initializer,
                                 Type type) {
  Location loc = decl->getLoc();
  auto [modulePath, name] = splitAttrPath(key);
  // Existing state: only requires_grad can change.
  jit::Module owner = model;
  bool exists = true;
  SmallVector<StringRef> parts;
  modulePath.split(parts, '.');
  for (StringRef part : modulePath.empty() ? ArrayRef<StringRef>() : parts) {
    if (!owner.hasattr(part.str()) || !owner.attr(part.str()).isModule()) {
      exists = false;
      break;
    }
    owner = owner.attr(part.str()).toModule();
  }
  if (exists && owner.hasattr(name.str())) {
    c10::IValue value = owner.attr(name.str());
    if (!value.isTensor())
      return emitError(loc, "'") << key << "' is not a tensor in the model";
    if (failed(checkAssumedValue(key, value.toTensor(), initializer,
                                 cast<TorchTensorType>(type), loc)))
      return failure();
    if (isParameter && value.toTensor().requires_grad() == frozen)
      value.toTensor().requires_grad_(!frozen);
    at::Tensor formatted = inMemoryFormat(value.toTensor(), channelsLast);
    if (!formatted.is_same(value.toTensor()))
      owner.setattr(name.str(), formatted);
    return success();
  }

  std::optional<c10::ScalarType> dtype =
      exportDtype(cast<TorchTensorType>(type).getDtype());
  if (dtype && failed(reserveNewState(key, cast<TorchTensorType>(type), *dtype,
                                      newStateBytes, loc)))
    return failure();
  FailureOr<at::Tensor> initial = materializeInitializer(
      key, initializer, cast<TorchTensorType>(type), model, svds, loc);
  if (failed(initial))
    return failure();
  at::Tensor value = inMemoryFormat(*initial, channelsLast);
  FailureOr<jit::Module> parent = ownModule(modulePath, loc);
  if (failed(parent))
    return failure();
  if (isParameter)
    parent->register_parameter(name.str(), value.set_requires_grad(!frozen),
                               /*is_buffer=*/false);
  else
    parent->register_buffer(name.str(), value);
  return success();
}

} // namespace

/// Records the layer order and frozen count composer-freeze-layers chose
/// as attributes of the root module, for a runtime that moves the frontier.
void exportLayerMetadata(ModuleOp module, jit::Module &model) {
  auto layers = module->getAttrOfType<ArrayAttr>("composer.layers");
  auto frozen = module->getAttrOfType<IntegerAttr>("composer.frozen_layers");
  if (!layers || !frozen)
    return;
  c10::List<std::string> names;
  for (Attribute layer : layers)
    names.push_back(cast<StringAttr>(layer).str());
  auto setOrRegister = [&](const std::string &name, c10::TypePtr type,
                           c10::IValue value) {
    if (model.hasattr(name))
      model.setattr(name, std::move(value));
    else
      model.register_attribute(name, type, std::move(value));
  };
  setOrRegister(std::string(kLayersAttrName), c10::ListType::ofStrings(),
                names);
  setOrRegister(std::string(kFrozenLayersAttrName), c10::IntType::get(),
                frozen.getInt());
}

LogicalResult composer::syncModelState(ModuleOp module, jit::Module &model) {
  exportLayerMetadata(module, model);
  StateSync sync(model);
  for (Operation &op : module.getBody()->getOperations()) {
    LogicalResult result = success();
    if (auto param = dyn_cast<ParameterOp>(op))
      result = sync.declare(param, param.getSymName(), /*isParameter=*/true,
                            param.getFrozen(), param.getChannelsLast(),
                            param.getInitializerAttr(), param.getType());
    else if (auto buffer = dyn_cast<BufferOp>(op))
      result = sync.declare(buffer, buffer.getSymName(),
                            /*isParameter=*/false, /*frozen=*/false,
                            buffer.getChannelsLast(),
                            buffer.getInitializerAttr(), buffer.getType());
    if (failed(result))
      return failure();
  }
  return success();
}
