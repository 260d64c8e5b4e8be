//===- AtenKinds.cpp - the aten kinds the passes know ---------------------===//

#include "composer/Dialect/AtenKinds.h"
#include "composer/Dialect/Composer.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace composer {

#include "composer/Dialect/AtenKinds.cpp.inc"

static_assert(std::size(kAtenKindTable) == kNumAtenKinds,
              "one table entry per AtenKind");

const AtenKindInfo &getAtenKindInfo(AtenKind kind) {
  const AtenKindInfo &info = kAtenKindTable[static_cast<unsigned>(kind)];
  assert(info.kind == kind && "the table is in enumeration order");
  return info;
}

StringRef getAtenKindName(AtenKind kind) {
  return getAtenKindInfo(kind).getName();
}

const AtenKindInfo *lookupAtenKind(StringRef name) {
  name = name.split('.').first;
  // The generator sorts the table by name.
  const AtenKindInfo *entry =
      llvm::partition_point(kAtenKindTable, [&](const AtenKindInfo &info) {
        return info.getName() < name;
      });
  if (entry == std::end(kAtenKindTable) || entry->getName() != name)
    return nullptr;
  return entry;
}

const AtenKindInfo *lookupAtenKind(Operation *op) {
  if (auto generic = dyn_cast<GenericOp>(op))
    return lookupAtenKind(generic.getKind());
  auto schemaOp = dyn_cast<TorchSchemaOp>(op);
  if (!schemaOp)
    return nullptr;
  if (op->hasAttr("inplace"))
    return lookupAtenKind(schemaOp.getInplaceTorchSchema());
  return lookupAtenKind(schemaOp.getTorchSchema());
}

bool hasAtenTrait(Operation *op, AtenTrait trait) {
  const AtenKindInfo *info = lookupAtenKind(op);
  return info && info->has(trait);
}

} // namespace composer
