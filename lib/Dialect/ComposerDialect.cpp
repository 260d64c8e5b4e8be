//===- ComposerDialect.cpp - composer dialect registration ----------------===//

#include "composer/Dialect/Composer.h"

using namespace mlir;
using namespace composer;

#include "composer/Dialect/ComposerDialect.cpp.inc"

void ComposerDialect::initialize() {
  registerTypes();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "composer/Dialect/ComposerOps.cpp.inc"
      >();
}

Operation *ComposerDialect::materializeConstant(OpBuilder &builder,
                                                Attribute value, Type type,
                                                Location loc) {
  return builder.create<ConstantOp>(loc, type, value);
}
