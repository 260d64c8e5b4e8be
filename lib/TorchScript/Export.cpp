//===- Export.cpp - composer dialect -> TorchScript forward ---------------===//
//
// Rebuilds a TorchScript graph from @forward: symbols become attribute
// chains on `self`, typed ops become their schema's node with constants for
// the arguments they keep as attributes, generic ops their original node
// (composer:: runtime operators load libComposerRuntime for their schemas).
// The graph replaces the model's forward; everything else stays. A
// checkpointed unit becomes a method of its own, which forward calls
// through composer::checkpoint.
//
//===----------------------------------------------------------------------===//

#include "Conversion.h"
#include "Import.h"
#include "RuntimeLibrary.h"
#include "State.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <torch/csrc/jit/runtime/operator.h>

using namespace mlir;
using namespace composer;
namespace jit = torch::jit;

namespace {

LogicalResult requireRuntimeOperator(StringRef kind, Location loc);

class Exporter {
public:
  explicit Exporter(jit::Module &model)
      : model(model), cu(*model._ivalue()->compilation_unit()),
        graph(std::make_shared<jit::Graph>()) {}

  LogicalResult run(func::FuncOp forward);
  /// Exports a checkpointed unit's region as a method's graph: `self`, the
  /// region's arguments, and what it yields (a tuple for several).
  LogicalResult runUnit(Block &body);
  std::shared_ptr<jit::Graph> getGraph() const { return graph; }

private:
  LogicalResult exportCheckpointCall(CheckpointCallOp call);
  LogicalResult exportBlock(Block &block);
  LogicalResult exportOp(Operation *op);
  LogicalResult exportTyped(Operation *op, TorchSchemaOp schemaOp);
  jit::Node *createGetAttr(jit::Value *object, const std::string &field);
  FailureOr<jit::Value *> moduleValue(StringRef path, Location loc);
  FailureOr<jit::Value *> attributeValue(StringRef path, Location loc);
  FailureOr<std::vector<jit::Value *>> lookup(ValueRange values);
  LogicalResult setResultTypes(Operation *op, jit::Node *node);
  LogicalResult setNodeAttribute(jit::Node *node, NamedAttribute attr,
                                 Location loc);
  void bind(Operation *op, jit::Node *node);

  jit::Module &model;
  jit::CompilationUnit &cu;
  std::shared_ptr<jit::Graph> graph;
  llvm::DenseMap<Value, jit::Value *> values;
  llvm::StringMap<jit::Value *> modulePaths;
  jit::Node *prologueEnd = nullptr;
};

LogicalResult Exporter::run(func::FuncOp forward) {
  jit::Value *self = graph->addInput("self")->setType(model.type());
  modulePaths[""] = self;
  std::string error;
  for (BlockArgument arg : forward.getArguments()) {
    c10::TypePtr type = exportType(arg.getType(), cu, error);
    if (!type)
      return forward.emitError("argument #")
             << arg.getArgNumber() << ": " << error;
    jit::Value *input = graph->addInput()->setType(type);
    if (auto name = forward.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                         "composer.name"))
      input->setDebugName(name.str());
    values[arg] = input;
  }
  return exportBlock(forward.getBody().front());
}

LogicalResult Exporter::runUnit(Block &body) {
  modulePaths[""] = graph->addInput("self")->setType(model.type());
  std::string error;
  for (BlockArgument arg : body.getArguments()) {
    c10::TypePtr type = exportType(arg.getType(), cu, error);
    if (!type)
      return emitError(arg.getLoc(), "unit argument #")
             << arg.getArgNumber() << ": " << error;
    values[arg] = graph->addInput()->setType(type);
  }
  if (failed(exportBlock(body)))
    return failure();
  if (graph->outputs().size() > 1) {
    std::vector<jit::Value *> outputs(graph->outputs().begin(),
                                      graph->outputs().end());
    while (!graph->outputs().empty())
      graph->eraseOutput(0);
    graph->registerOutput(
        graph->insertNode(graph->createTuple(outputs))->output());
  }
  return success();
}

/// A method name no method of `type` has: `base`, or `base_<n>`.
static std::string uniqueMethodName(const c10::ClassType &type,
                                    const std::string &base) {
  std::string name = base;
  for (int suffix = 1; type.findMethod(name); ++suffix)
    name = base + "_" + std::to_string(suffix);
  return name;
}

/// The unit becomes a method, `checkpointed_<unit>`, called through
/// composer::checkpoint(self, name, inputs, preserved).
LogicalResult Exporter::exportCheckpointCall(CheckpointCallOp call) {
  Location loc = call.getLoc();
  if (failed(requireRuntimeOperator("composer::checkpoint", loc)))
    return failure();
  FailureOr<std::vector<jit::Value *>> inputs = lookup(call.getInputs());
  FailureOr<std::vector<jit::Value *>> preserved = lookup(call.getPreserved());
  if (failed(inputs) || failed(preserved))
    return failure();
  Exporter unit(model);
  if (failed(unit.runUnit(call.getBody().front())))
    return failure();
  std::string base = "checkpointed_" + call.getUnit().str();
  for (char &c : base)
    if (!llvm::isAlnum(c))
      c = '_';
  c10::ClassTypePtr type = model.type();
  std::string method = uniqueMethodName(*type, base);
  type->addMethod(cu.create_function(c10::QualifiedName(*type->name(), method),
                                     unit.getGraph()));

  auto tensorList = c10::ListType::ofTensors();
  jit::Value *inputList =
      graph->insertNode(graph->createList(c10::TensorType::get(), *inputs))
          ->output();
  jit::Value *preservedList =
      graph->insertNode(graph->createList(c10::TensorType::get(), *preserved))
          ->output();
  jit::Node *node = graph->insertNode(
      graph->create(jit::Symbol::fromQualString("composer::checkpoint"),
                    {modulePaths[""], graph->insertConstant(method), inputList,
                     preservedList}));
  node->output()->setType(tensorList);
  jit::Node *unpack = graph->insertNode(
      graph->createListUnpack(node->output(), call.getNumResults()));
  if (failed(setResultTypes(call, unpack)))
    return failure();
  bind(call, unpack);
  return success();
}

FailureOr<std::vector<jit::Value *>> Exporter::lookup(ValueRange range) {
  std::vector<jit::Value *> result;
  for (Value value : range) {
    auto it = values.find(value);
    if (it == values.end())
      return emitError(value.getLoc(), "value used before it is exported");
    result.push_back(it->second);
  }
  return result;
}

/// Whether jit::Value::setDebugName takes `name` (its check is not
/// exported): value names that are numbers are reserved.
static bool isValidValueName(StringRef name) {
  return name.empty() ||
         !llvm::all_of(name, [](char c) { return llvm::isDigit(c); });
}

/// prim::GetAttr of `field` on `object`, its output named after the field
/// where that is a valid value name. Graph::createGetAttr names it so
/// unconditionally, which throws for the numbered children of an
/// nn.ModuleList or nn.Sequential ("0").
jit::Node *Exporter::createGetAttr(jit::Value *object,
                                   const std::string &field) {
  jit::Node *node = graph->create(jit::prim::GetAttr, {object});
  node->s_(jit::attr::name, field);
  node->output()->setType(
      object->type()->expectRef<c10::ClassType>().getAttribute(field));
  if (isValidValueName(field))
    node->output()->setDebugName(field);
  return node;
}

// Submodule chains are emitted once, at the top of the graph, so they
// dominate every use whatever block it is in.
FailureOr<jit::Value *> Exporter::moduleValue(StringRef path, Location loc) {
  auto it = modulePaths.find(path);
  if (it != modulePaths.end())
    return it->second;
  auto [parentPath, name] = splitAttrPath(path);
  FailureOr<jit::Value *> parent = moduleValue(parentPath, loc);
  if (failed(parent))
    return failure();
  auto parentType = (*parent)->type()->cast<c10::ClassType>();
  if (!parentType || !parentType->hasAttribute(name.str()) ||
      !parentType->getAttribute(name.str())->cast<c10::ClassType>())
    return emitError(loc, "the model has no submodule '") << path << "'";
  jit::Node *getAttr = createGetAttr(*parent, name.str());
  if (prologueEnd)
    getAttr->insertAfter(prologueEnd);
  else
    graph->block()->prependNode(getAttr);
  prologueEnd = getAttr;
  // A dot in a debug name reads as a uniquing suffix; keep the path readable.
  std::string debugName = path.str();
  std::replace(debugName.begin(), debugName.end(), '.', '_');
  // A top-level nn.Sequential's children are numbers.
  if (isValidValueName(debugName))
    getAttr->output()->setDebugName(debugName);
  return modulePaths[path] = getAttr->output();
}

FailureOr<jit::Value *> Exporter::attributeValue(StringRef path, Location loc) {
  auto [modulePath, name] = splitAttrPath(path);
  FailureOr<jit::Value *> owner = moduleValue(modulePath, loc);
  if (failed(owner))
    return failure();
  if (!(*owner)->type()->expectRef<c10::ClassType>().hasAttribute(name.str()))
    return emitError(loc, "the model has no attribute '") << path << "'";
  return graph->insertNode(createGetAttr(*owner, name.str()))->output();
}

void Exporter::bind(Operation *op, jit::Node *node) {
  for (auto [result, output] : llvm::zip(op->getResults(), node->outputs()))
    values[result] = output;
}

LogicalResult Exporter::setResultTypes(Operation *op, jit::Node *node) {
  std::string error;
  for (auto [result, output] : llvm::zip(op->getResults(), node->outputs())) {
    c10::TypePtr type = exportType(result.getType(), cu, error);
    if (!type)
      return op->emitError() << error;
    output->setType(type);
  }
  return success();
}

LogicalResult Exporter::exportBlock(Block &block) {
  for (Operation &op : block)
    if (failed(exportOp(&op)))
      return failure();
  return success();
}

LogicalResult Exporter::setNodeAttribute(jit::Node *node, NamedAttribute attr,
                                         Location loc) {
  jit::Symbol name = jit::Symbol::attr(attr.getName().str());
  Attribute value = attr.getValue();
  if (auto i = dyn_cast<IntegerAttr>(value))
    node->i_(name, i.getInt());
  else if (auto f = dyn_cast<FloatAttr>(value))
    node->f_(name, f.getValueAsDouble());
  else if (auto s = dyn_cast<StringAttr>(value))
    node->s_(name, s.str());
  else if (auto is = dyn_cast<DenseI64ArrayAttr>(value))
    node->is_(name, is.asArrayRef().vec());
  else if (auto fs = dyn_cast<DenseF64ArrayAttr>(value))
    node->fs_(name, fs.asArrayRef().vec());
  else if (auto ty = dyn_cast<TypeAttr>(value)) {
    std::string error;
    c10::TypePtr type = exportType(ty.getValue(), cu, error);
    if (!type)
      return emitError(loc) << error;
    node->ty_(name, type);
  } else if (auto array = dyn_cast<ArrayAttr>(value)) {
    if (llvm::all_of(array, [](Attribute a) { return isa<TypeAttr>(a); }) &&
        !array.empty()) {
      std::vector<c10::TypePtr> types;
      for (Attribute element : array) {
        std::string error;
        types.push_back(
            exportType(cast<TypeAttr>(element).getValue(), cu, error));
        if (!types.back())
          return emitError(loc) << error;
      }
      node->tys_(name, types);
    } else {
      std::vector<std::string> strings;
      for (Attribute element : array) {
        auto s = dyn_cast<StringAttr>(element);
        if (!s)
          return emitError(loc, "unsupported node attribute '")
                 << attr.getName() << "'";
        strings.push_back(s.str());
      }
      node->ss_(name, strings);
    }
  } else if (auto tensor = dyn_cast<DenseElementsAttr>(value)) {
    std::string error;
    std::optional<c10::IValue> exported =
        exportConstant(tensor, c10::TensorType::get(), error);
    if (!exported)
      return emitError(loc) << error;
    node->t_(name, exported->toTensor());
  } else {
    return emitError(loc, "unsupported node attribute '")
           << attr.getName() << "'";
  }
  return success();
}

/// Saving a node needs its operator's schema. The composer:: runtime
/// operators (composer-lower-to-runtime) register theirs in
/// libComposerRuntime, which is loaded here at the first such node, so that
/// only models lowered to it pay for it.
LogicalResult requireRuntimeOperator(StringRef kind, Location loc) {
  jit::Symbol symbol = jit::Symbol::fromQualString(kind.str());
  if (!jit::getAllOperatorsFor(symbol).empty())
    return success();
  std::string error;
  if (!loadRuntimeLibrary(error).isValid())
    return emitError(loc, "cannot export ")
           << kind << ": loading the runtime library '" << runtimeLibraryPath()
           << "' failed: " << error;
  if (jit::getAllOperatorsFor(symbol).empty())
    return emitError(loc, "cannot export ")
           << kind << ": the runtime library '" << runtimeLibraryPath()
           << "' has no such operator";
  return success();
}

/// The registered operator for "name.overload".
std::shared_ptr<jit::Operator> findOperator(StringRef key) {
  auto [name, overload] = key.split('.');
  for (const std::shared_ptr<jit::Operator> &op :
       jit::getAllOperatorsFor(jit::Symbol::fromQualString(name.str())))
    if (op->schema().overload_name() == overload)
      return op;
  return nullptr;
}

LogicalResult Exporter::exportTyped(Operation *op, TorchSchemaOp schemaOp) {
  bool inplace = op->hasAttr("inplace");
  StringRef key =
      inplace ? schemaOp.getInplaceTorchSchema() : schemaOp.getTorchSchema();
  std::shared_ptr<jit::Operator> torchOp = findOperator(key);
  if (!torchOp)
    return op->emitError("LibTorch has no operator ") << key;
  const c10::FunctionSchema &schema = torchOp->schema();
  ArrayRef<StringAttr> attrNames = op->getName().getAttributeNames();
  std::vector<jit::Value *> inputs;
  unsigned nextOperand = 0;
  for (const c10::Argument &arg : schema.arguments()) {
    bool isAttr = llvm::any_of(
        attrNames, [&](StringAttr attr) { return attr == arg.name(); });
    if (!isAttr) {
      if (nextOperand >= op->getNumOperands())
        return op->emitError("too few operands for ") << key;
      FailureOr<std::vector<jit::Value *>> operand =
          lookup(op->getOperand(nextOperand++));
      if (failed(operand))
        return failure();
      inputs.push_back(operand->front());
      continue;
    }
    Attribute attr = op->getAttr(arg.name());
    if (!attr) {
      inputs.push_back(graph->insertConstant(c10::IValue()));
      continue;
    }
    std::string error;
    std::optional<c10::IValue> constant =
        exportConstant(attr, arg.type(), error);
    if (!constant)
      return op->emitError("argument '") << arg.name() << "': " << error;
    inputs.push_back(graph->insertConstant(*constant));
  }
  jit::Node *node = graph->insertNode(graph->create(
      jit::Symbol::fromQualString(schema.name()), inputs, op->getNumResults()));
  if (failed(setResultTypes(op, node)))
    return failure();
  bind(op, node);
  return success();
}

LogicalResult Exporter::exportOp(Operation *op) {
  Location loc = op->getLoc();
  if (auto schemaOp = dyn_cast<TorchSchemaOp>(op))
    return exportTyped(op, schemaOp);
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<ConstantOp>([&](ConstantOp constant) -> LogicalResult {
        std::string error;
        c10::TypePtr type = exportType(constant.getType(), cu, error);
        std::optional<c10::IValue> value =
            type ? exportConstant(constant.getValue(), type, error)
                 : std::nullopt;
        if (!value)
          return constant.emitError() << error;
        jit::Value *exported = graph->insertConstant(*value);
        // List constants are typed by their elements; keep the declared type.
        exported->setType(type);
        values[constant] = exported;
        return success();
      })
      .Case<GetParamOp>([&](GetParamOp read) -> LogicalResult {
        FailureOr<jit::Value *> value = attributeValue(read.getName(), loc);
        if (failed(value))
          return failure();
        // Scripted modules declare optional parameters (a conv's bias) as
        // Tensor?; a read of one is a tensor, which ops without an optional
        // overload (the casts a pass adds) need.
        if (auto optional = (*value)->type()->cast<c10::OptionalType>())
          *value =
              graph->insertUncheckedCast(*value, optional->getElementType());
        values[read] = *value;
        return success();
      })
      .Case<GetAttrOp>([&](GetAttrOp read) -> LogicalResult {
        FailureOr<jit::Value *> value = attributeValue(read.getPath(), loc);
        if (failed(value))
          return failure();
        values[read] = *value;
        return success();
      })
      .Case<SetAttrOp>([&](SetAttrOp write) -> LogicalResult {
        auto [modulePath, name] = splitAttrPath(write.getPath());
        FailureOr<jit::Value *> owner = moduleValue(modulePath, loc);
        FailureOr<std::vector<jit::Value *>> value = lookup(write.getValue());
        if (failed(owner) || failed(value))
          return failure();
        graph->insertNode(
            graph->createSetAttr(*owner, name.str(), value->front()));
        return success();
      })
      .Case<GenericOp>([&](GenericOp generic) -> LogicalResult {
        FailureOr<std::vector<jit::Value *>> inputs =
            lookup(generic.getOperands());
        if (failed(inputs))
          return failure();
        if (generic.getKind().starts_with("composer::") &&
            failed(requireRuntimeOperator(generic.getKind(), loc)))
          return failure();
        jit::Node *node =
            graph->create(jit::Symbol::fromQualString(generic.getKind().str()),
                          *inputs, generic.getNumResults());
        if (DictionaryAttr attrs = generic.getAttrsAttr())
          for (NamedAttribute attr : attrs)
            if (failed(setNodeAttribute(node, attr, loc)))
              return failure();
        graph->insertNode(node);
        if (failed(setResultTypes(op, node)))
          return failure();
        bind(op, node);
        return success();
      })
      .Case<CheckpointCallOp>(
          [&](CheckpointCallOp call) { return exportCheckpointCall(call); })
      .Case<IfOp>([&](IfOp ifOp) -> LogicalResult {
        FailureOr<std::vector<jit::Value *>> condition =
            lookup(ifOp.getCondition());
        if (failed(condition))
          return failure();
        jit::Node *node = graph->insertNode(
            graph->create(jit::prim::If, *condition, ifOp.getNumResults()));
        for (Region *region : {&ifOp.getThenRegion(), &ifOp.getElseRegion()}) {
          jit::Block *block = node->addBlock();
          jit::WithInsertPoint guard(block);
          if (failed(exportBlock(region->front())))
            return failure();
        }
        if (failed(setResultTypes(op, node)))
          return failure();
        bind(op, node);
        return success();
      })
      .Case<LoopOp>([&](LoopOp loop) -> LogicalResult {
        FailureOr<std::vector<jit::Value *>> inputs =
            lookup(loop->getOperands());
        if (failed(inputs))
          return failure();
        jit::Node *node = graph->insertNode(
            graph->create(jit::prim::Loop, *inputs, loop.getNumResults()));
        jit::Block *block = node->addBlock();
        std::string error;
        for (BlockArgument arg : loop.getBody().getArguments()) {
          c10::TypePtr type = exportType(arg.getType(), cu, error);
          if (!type)
            return loop.emitError() << error;
          values[arg] = block->addInput()->setType(type);
        }
        {
          jit::WithInsertPoint guard(block);
          if (failed(exportBlock(loop.getBody().front())))
            return failure();
        }
        if (failed(setResultTypes(op, node)))
          return failure();
        bind(op, node);
        return success();
      })
      .Case<YieldOp>([&](YieldOp yield) -> LogicalResult {
        FailureOr<std::vector<jit::Value *>> outputs =
            lookup(yield.getValues());
        if (failed(outputs))
          return failure();
        jit::Block *block = graph->insertPoint()->owningBlock();
        for (jit::Value *output : *outputs)
          block->registerOutput(output);
        return success();
      })
      .Case<func::ReturnOp>([&](func::ReturnOp ret) -> LogicalResult {
        FailureOr<std::vector<jit::Value *>> outputs =
            lookup(ret.getOperands());
        if (failed(outputs))
          return failure();
        for (jit::Value *output : *outputs)
          graph->registerOutput(output);
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitError("cannot export '")
               << other->getName() << "' to TorchScript; lower it first";
      });
}

} // namespace

LogicalResult composer::exportTorchScriptModule(ModuleOp module,
                                                jit::Module &model) {
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward)
    return module.emitError("no func.func @forward to export");
  // State first: new submodule types must exist before the graph's
  // attribute chains are typed against them.
  if (failed(syncModelState(module, model)))
    return failure();
  Exporter exporter(model);
  if (failed(exporter.run(forward)))
    return failure();

  // Swap the new graph in as forward, keeping the original signature (its
  // argument names and defaults) when the arity still matches.
  c10::ClassTypePtr type = model.type();
  jit::Function &old = model.get_method("forward").function();
  c10::QualifiedName qualname = old.qualname();
  c10::FunctionSchema schema = old.getSchema();
  std::shared_ptr<jit::Graph> graph = exporter.getGraph();
  bool keepSchema = schema.arguments().size() == graph->inputs().size() &&
                    schema.returns().size() == graph->outputs().size();
  jit::CompilationUnit &cu = *model._ivalue()->compilation_unit();
  type->unsafeRemoveMethod("forward");
  cu.unsafeRemoveMethod(qualname);
  jit::Function *fn = cu.create_function(qualname, graph);
  if (keepSchema)
    fn->setSchema(schema);
  type->addMethod(fn);
  return success();
}
