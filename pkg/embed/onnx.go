package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
	"golang.org/x/sync/errgroup"
)

// ONNX runs a BERT-style sentence-embedding model in-process with ONNX Runtime:
// WordPiece tokenisation, truncation to MaxTokens, batches padded to their
// longest text, mean pooling over the attention mask and L2 normalisation (the
// all-MiniLM-L6-v2 recipe). Safe for concurrent use: calls share a pool of
// Config.Sessions model sessions.
type ONNX struct {
	model     Model
	tok       *wordPiece
	maxTokens int
	batchSize int
	batchTok  int
	hasTypes  bool // the model takes token_type_ids
	pooled    bool // the model's output is already one vector per text
	logger    *slog.Logger

	pool      chan *onnxSession
	done      chan struct{}
	closeOnce sync.Once
	sessions  []*onnxSession
}

type onnxSession struct {
	s    *ort.DynamicAdvancedSession
	opts *ort.RunOptions
}

// The ONNX Runtime environment is process-wide: it is loaded once, from one
// library path, and kept for the life of the process (unloading and reloading
// the library is not something ONNX Runtime supports well).
var ortRuntime struct {
	mu  sync.Mutex
	lib string
}

func loadORT(lib string) error {
	ortRuntime.mu.Lock()
	defer ortRuntime.mu.Unlock()
	abs, err := filepath.Abs(lib)
	if err != nil {
		return fmt.Errorf("resolve ONNX Runtime library path %q: %w", lib, err)
	}
	if ortRuntime.lib != "" {
		if ortRuntime.lib != abs {
			return fmt.Errorf("ONNX Runtime is already loaded from %s in this process; cannot also load %s", ortRuntime.lib, abs)
		}
		return nil
	}
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("ONNX Runtime library (ORTLib): %w; run deploy/local/model.sh install", err)
	}
	ort.SetSharedLibraryPath(abs)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return fmt.Errorf("load ONNX Runtime from %s (onnxruntime_go needs onnxruntime >= 1.24, C API 24): %w", abs, err)
	}
	ortRuntime.lib = abs
	return nil
}

// NewONNX loads the model in cfg.ModelDir. Only cfg's onnx fields are used.
func NewONNX(cfg Config, logger *slog.Logger) (*ONNX, error) {
	cfg.Provider = ProviderONNX
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	modelPath := filepath.Join(cfg.ModelDir, cfg.ModelFile)
	if _, err := os.Stat(modelPath); err != nil {
		return nil, fmt.Errorf("embedding model (ModelDir/ModelFile): %w; run deploy/local/model.sh install", err)
	}
	meta, err := readModelMeta(cfg.ModelDir)
	if err != nil {
		return nil, err
	}
	if meta.MaxPositions > 0 && cfg.MaxTokens > meta.MaxPositions {
		return nil, fmt.Errorf("embed config: MaxTokens is %d but the model has %d positions", cfg.MaxTokens, meta.MaxPositions)
	}
	tok, err := loadVocab(filepath.Join(cfg.ModelDir, "vocab.txt"), meta.Lowercase)
	if err != nil {
		return nil, err
	}
	if err := loadORT(cfg.ORTLib); err != nil {
		return nil, err
	}

	ins, outs, err := ort.GetInputOutputInfo(modelPath)
	if err != nil {
		return nil, fmt.Errorf("read inputs and outputs of %s: %w", modelPath, err)
	}
	e := &ONNX{
		tok:       tok,
		maxTokens: cfg.MaxTokens,
		batchSize: cfg.BatchSize,
		batchTok:  cfg.BatchTokens,
		logger:    logger,
		done:      make(chan struct{}),
	}
	inputNames, outName, err := e.readIO(modelPath, ins, outs)
	if err != nil {
		return nil, err
	}
	e.model.Name = cfg.Model
	if err := e.openSessions(cfg, modelPath, inputNames, outName); err != nil {
		return nil, err
	}

	if e.model.Dims <= 0 { // dynamic hidden size: ask the model
		v, err := e.Embed(context.Background(), []string{"dimension probe"})
		if err != nil {
			_ = e.Close()
			return nil, fmt.Errorf("probe dimensions of %s: %w", modelPath, err)
		}
		e.model.Dims = len(v[0])
	}
	if cfg.Dims > 0 && cfg.Dims != e.model.Dims {
		_ = e.Close()
		return nil, fmt.Errorf("%w: Dims is configured as %d but %s produces %d", ErrModelMismatch, cfg.Dims, modelPath, e.model.Dims)
	}
	logger.Info("embedding model loaded", "model", e.model.Name, "dims", e.model.Dims, "path", modelPath,
		"max_tokens", cfg.MaxTokens, "threads", cfg.Threads, "sessions", cfg.Sessions)
	return e, nil
}

// readIO checks that the model is a BERT-style encoder and records what its inputs
// and output say: whether it takes token_type_ids, whether it pools, its hidden
// size (0 when dynamic). It returns the input names to feed and the output to read.
func (e *ONNX) readIO(modelPath string, ins, outs []ort.InputOutputInfo) ([]string, string, error) {
	inputNames := []string{"input_ids", "attention_mask"}
	have := map[string]bool{}
	for _, in := range ins {
		have[in.Name] = true
	}
	for _, n := range inputNames {
		if !have[n] {
			return nil, "", fmt.Errorf("model %s has no input %q: want a BERT-style encoder (input_ids, attention_mask)", modelPath, n)
		}
	}
	if have["token_type_ids"] {
		e.hasTypes = true
		inputNames = append(inputNames, "token_type_ids")
	}
	if len(ins) != len(inputNames) {
		return nil, "", fmt.Errorf("model %s takes %d inputs, only input_ids, attention_mask and token_type_ids are supported", modelPath, len(ins))
	}
	if len(outs) == 0 {
		return nil, "", fmt.Errorf("model %s has no output", modelPath)
	}
	out := outs[0]
	dims := out.Dimensions
	switch len(dims) {
	case 3: // [batch, sequence, hidden]: pool here
	case 2: // [batch, hidden]: pooled by the model
		e.pooled = true
	default:
		return nil, "", fmt.Errorf("model %s output %q has shape %v: want [batch, sequence, hidden] or [batch, hidden]", modelPath, out.Name, dims)
	}
	e.model.Dims = int(dims[len(dims)-1])
	return inputNames, out.Name, nil
}

// openSessions creates cfg.Sessions ONNX Runtime sessions of the model and puts
// them in the pool; on failure it destroys those it made.
func (e *ONNX) openSessions(cfg Config, modelPath string, inputNames []string, outName string) error {
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return fmt.Errorf("create ONNX Runtime session options: %w", err)
	}
	defer opts.Destroy() //nolint:errcheck // freeing native options: nothing to do if it fails
	if err := opts.SetIntraOpNumThreads(cfg.Threads); err != nil {
		return fmt.Errorf("set ONNX Runtime intra-op threads to %d: %w", cfg.Threads, err)
	}
	if err := opts.SetInterOpNumThreads(1); err != nil {
		return fmt.Errorf("set ONNX Runtime inter-op threads: %w", err)
	}
	// Idle worker threads sleep instead of spinning: the crawler fetches and
	// parses on the same cores while a batch is being prepared.
	if err := opts.AddSessionConfigEntry("session.intra_op.allow_spinning", "0"); err != nil {
		return fmt.Errorf("disable ONNX Runtime thread spinning: %w", err)
	}
	e.pool = make(chan *onnxSession, cfg.Sessions)
	for range cfg.Sessions {
		s, err := ort.NewDynamicAdvancedSession(modelPath, inputNames, []string{outName}, opts)
		if err != nil {
			e.destroySessions()
			return fmt.Errorf("load model %s: %w", modelPath, err)
		}
		ro, err := ort.NewRunOptions()
		if err != nil {
			_ = s.Destroy()
			e.destroySessions()
			return fmt.Errorf("create ONNX Runtime run options: %w", err)
		}
		sess := &onnxSession{s: s, opts: ro}
		e.sessions = append(e.sessions, sess)
		e.pool <- sess
	}
	return nil
}

type modelMeta struct {
	MaxPositions int
	Lowercase    bool
}

// readModelMeta reads max_position_embeddings (config.json) and do_lower_case
// (tokenizer_config.json) when the files exist; defaults: unknown, lowercase.
func readModelMeta(dir string) (modelMeta, error) {
	m := modelMeta{Lowercase: true}
	var cfg struct {
		MaxPositions int `json:"max_position_embeddings"`
	}
	if err := readJSONIfExists(filepath.Join(dir, "config.json"), &cfg); err != nil {
		return m, err
	}
	m.MaxPositions = cfg.MaxPositions
	var tc struct {
		DoLowerCase *bool `json:"do_lower_case"`
	}
	if err := readJSONIfExists(filepath.Join(dir, "tokenizer_config.json"), &tc); err != nil {
		return m, err
	}
	if tc.DoLowerCase != nil {
		m.Lowercase = *tc.DoLowerCase
	}
	return m, nil
}

func readJSONIfExists(path string, v any) error {
	b, err := os.ReadFile(path) //nolint:gosec // G304: the model directory comes from the operator's configuration
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	return nil
}

// Info implements Embedder.
func (e *ONNX) Info() Model { return e.model }

// Tokens returns the number of model tokens text takes, [CLS] and [SEP]
// included, before truncation to MaxTokens. Chunkers can use it to size chunks.
func (e *ONNX) Tokens(text string) int {
	return len(e.tok.encode(text, 1<<30))
}

// Embed implements Embedder.
func (e *ONNX) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	select {
	case <-e.done:
		return nil, ErrClosed
	default:
	}
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	toks := make([][]int32, len(texts))
	lengths := make([]int, len(texts))
	for i, t := range texts {
		toks[i] = e.tok.encode(t, e.maxTokens)
		lengths[i] = len(toks[i])
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(cap(e.pool))
	for _, batch := range planBatches(lengths, e.batchSize, e.batchTok, true) {
		g.Go(func() error { return e.runBatch(ctx, toks, batch, out) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

func (e *ONNX) acquire(ctx context.Context) (*onnxSession, error) {
	select {
	case s := <-e.pool:
		select {
		case <-e.done:
			e.pool <- s // let Close collect it
			return nil, ErrClosed
		default:
			return s, nil
		}
	case <-e.done:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// runBatch embeds texts idx (already tokenised in toks) and writes out[idx[r]].
func (e *ONNX) runBatch(ctx context.Context, toks [][]int32, idx []int, out [][]float32) error {
	rows, width := len(idx), 0
	for _, i := range idx {
		width = max(width, len(toks[i]))
	}
	ids := make([]int64, rows*width)
	mask := make([]int64, rows*width)
	for r, i := range idx {
		row := ids[r*width : (r+1)*width]
		for j := range row {
			row[j] = int64(e.tok.pad)
		}
		for j, t := range toks[i] {
			row[j] = int64(t)
			mask[r*width+j] = 1
		}
	}
	shape := ort.NewShape(int64(rows), int64(width))
	inputs := make([]ort.Value, 0, 3)
	defer func() {
		for _, v := range inputs {
			_ = v.Destroy()
		}
	}()
	for _, data := range [][]int64{ids, mask} {
		t, err := ort.NewTensor(shape, data)
		if err != nil {
			return fmt.Errorf("create input tensor %v: %w", shape, err)
		}
		inputs = append(inputs, t)
	}
	if e.hasTypes {
		t, err := ort.NewTensor(shape, make([]int64, rows*width))
		if err != nil {
			return fmt.Errorf("create input tensor %v: %w", shape, err)
		}
		inputs = append(inputs, t)
	}

	s, err := e.acquire(ctx)
	if err != nil {
		return err
	}
	outputs := []ort.Value{nil}
	runErr := s.run(ctx, inputs, outputs)
	e.pool <- s
	if outputs[0] != nil {
		defer outputs[0].Destroy() //nolint:errcheck // freeing a native tensor: nothing to do if it fails
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if runErr != nil {
		return fmt.Errorf("run embedding model on %d texts of up to %d tokens: %w", rows, width, runErr)
	}
	t, ok := outputs[0].(*ort.Tensor[float32])
	if !ok {
		return fmt.Errorf("embedding model output is %T, want a float32 tensor", outputs[0])
	}
	return e.poolOutput(t.GetData(), t.GetShape(), toks, idx, out)
}

// poolOutput turns the model output into one unit vector per text: mean over the
// attended positions for [rows, width, dims], or just normalisation for [rows, dims].
func (e *ONNX) poolOutput(data []float32, shape ort.Shape, toks [][]int32, idx []int, out [][]float32) error {
	rows := len(idx)
	if e.pooled {
		if len(shape) != 2 || shape[0] != int64(rows) {
			return fmt.Errorf("embedding model output shape %v, want [%d, dims]", shape, rows)
		}
		d := int(shape[1])
		for r, i := range idx {
			v := slices.Clone(data[r*d : (r+1)*d])
			Normalize(v)
			out[i] = v
		}
		return nil
	}
	if len(shape) != 3 || shape[0] != int64(rows) {
		return fmt.Errorf("embedding model output shape %v, want [%d, sequence, dims]", shape, rows)
	}
	width, d := int(shape[1]), int(shape[2])
	for r, i := range idx {
		n := len(toks[i]) // attended positions are the first n
		v := make([]float32, d)
		for j := range n {
			h := data[(r*width+j)*d : (r*width+j+1)*d]
			for k, x := range h {
				v[k] += x
			}
		}
		inv := 1 / float32(n)
		for k := range v {
			v[k] *= inv
		}
		Normalize(v)
		out[i] = v
	}
	return nil
}

// run executes the session; cancelling ctx terminates the run.
func (s *onnxSession) run(ctx context.Context, inputs, outputs []ort.Value) error {
	terminated := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = s.opts.Terminate()
		close(terminated)
	})
	err := s.s.RunWithOptions(inputs, outputs, s.opts)
	if !stop() {
		<-terminated
		_ = s.opts.UnsetTerminate()
	}
	return err
}

// Close implements Embedder: it waits for running batches, then frees the sessions.
func (e *ONNX) Close() error {
	e.closeOnce.Do(func() {
		close(e.done)
		for range e.sessions {
			<-e.pool
		}
		e.destroySessions()
	})
	return nil
}

func (e *ONNX) destroySessions() {
	for _, s := range e.sessions {
		_ = s.s.Destroy()
		_ = s.opts.Destroy()
	}
	e.sessions = nil
}
