//! Super-chunks: sequences of chunks sharing parameters, with metalayers.
