"""Named passes over the IR. Each module holds one pass; ``compiler.pipeline`` lists them."""
