//===- Event.cpp - Composer's training events -----------------------------===//

#include "composer/Runtime/Event.h"

namespace composer::runtime {

const char *eventName(Event event) {
  switch (event) {
#define EVENT(NAME, STRING)                                                    \
  case Event::NAME:                                                            \
    return STRING;
    EVENT(Init, "INIT")
    EVENT(BeforeLoad, "BEFORE_LOAD")
    EVENT(AfterLoad, "AFTER_LOAD")
    EVENT(FitStart, "FIT_START")
    EVENT(EpochStart, "EPOCH_START")
    EVENT(BeforeDataloader, "BEFORE_DATALOADER")
    EVENT(AfterDataloader, "AFTER_DATALOADER")
    EVENT(BatchStart, "BATCH_START")
    EVENT(BeforeTrainBatch, "BEFORE_TRAIN_BATCH")
    EVENT(BeforeForward, "BEFORE_FORWARD")
    EVENT(AfterForward, "AFTER_FORWARD")
    EVENT(BeforeLoss, "BEFORE_LOSS")
    EVENT(AfterLoss, "AFTER_LOSS")
    EVENT(BeforeBackward, "BEFORE_BACKWARD")
    EVENT(AfterBackward, "AFTER_BACKWARD")
    EVENT(AfterTrainBatch, "AFTER_TRAIN_BATCH")
    EVENT(BatchEnd, "BATCH_END")
    EVENT(BatchCheckpoint, "BATCH_CHECKPOINT")
    EVENT(EpochEnd, "EPOCH_END")
    EVENT(EpochCheckpoint, "EPOCH_CHECKPOINT")
    EVENT(EvalStart, "EVAL_START")
    EVENT(EvalBatchStart, "EVAL_BATCH_START")
    EVENT(EvalBeforeForward, "EVAL_BEFORE_FORWARD")
    EVENT(EvalAfterForward, "EVAL_AFTER_FORWARD")
    EVENT(EvalBatchEnd, "EVAL_BATCH_END")
    EVENT(EvalEnd, "EVAL_END")
    EVENT(EvalBeforeAll, "EVAL_BEFORE_ALL")
    EVENT(EvalAfterAll, "EVAL_AFTER_ALL")
    EVENT(EvalStandaloneStart, "EVAL_STANDALONE_START")
    EVENT(EvalStandaloneEnd, "EVAL_STANDALONE_END")
    EVENT(FitEnd, "FIT_END")
    EVENT(PredictStart, "PREDICT_START")
    EVENT(PredictBatchStart, "PREDICT_BATCH_START")
    EVENT(PredictBeforeForward, "PREDICT_BEFORE_FORWARD")
    EVENT(PredictAfterForward, "PREDICT_AFTER_FORWARD")
    EVENT(PredictBatchEnd, "PREDICT_BATCH_END")
    EVENT(PredictEnd, "PREDICT_END")
#undef EVENT
  }
  return "UNKNOWN";
}

} // namespace composer::runtime
