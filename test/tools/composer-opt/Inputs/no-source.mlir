// A module that does not name the .pt it came from.
func.func @forward(%x: !composer.tensor) -> !composer.tensor {
  return %x : !composer.tensor
}
