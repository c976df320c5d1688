package cli

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/jlgcli/jlgcli/internal/config"
)

// keyFlag is the flag of a configuration key: what it is given goes
// straight into the flag layer, read as the environment's text is.
type keyFlag struct {
	key   config.Key
	layer *config.Layer
	def   string
}

func (f *keyFlag) String() string { return f.def }
func (f *keyFlag) Type() string   { return f.key.Kind }
func (f *keyFlag) Set(s string) error {
	if err := f.key.Parse(f.layer, s); err != nil {
		return &flagValueError{flag: f.key.Flag, err: err}
	}
	return nil
}

// boolKeyFlag is a keyFlag that takes no value.
type boolKeyFlag struct{ keyFlag }

func (f *boolKeyFlag) IsBoolFlag() bool { return true }

// durationFlag is a flag of a duration that is no configuration key: read
// as every duration is (config.ParseDuration), refused the same way.
type durationFlag struct {
	name string
	d    *time.Duration
}

func (f *durationFlag) String() string { return f.d.String() }
func (f *durationFlag) Type() string   { return "duration" }
func (f *durationFlag) Set(s string) error {
	d, err := config.ParseDuration(s)
	if err != nil {
		return &flagValueError{flag: f.name, err: err}
	}
	*f.d = d
	return nil
}

// durationVar adds the duration flag name to fs, stored in d.
func durationVar(fs *pflag.FlagSet, d *time.Duration, name string, def time.Duration, usage string) {
	*d = def
	fs.Var(&durationFlag{name: name, d: d}, name, usage)
	if def == 0 {
		fs.Lookup(name).DefValue = "0" // help shows no default
	}
}

// flagValueError is a flag's value that its key refuses.
type flagValueError struct {
	flag string
	err  error
}

func (e *flagValueError) Error() string { return "--" + e.flag + " " + e.err.Error() }

// bindKeys adds to fs the flags that command has of the key table; what
// they are given goes into l, the flag layer.
func bindKeys(fs *pflag.FlagSet, command string, l *config.Layer) {
	for _, k := range config.Table() {
		if usage, def, ok := k.Use(command); ok {
			bindKey(fs, k, k.Flag, k.Short, usage, def, l)
		}
	}
}

// bindKey adds the flag name of key k to fs.
func bindKey(fs *pflag.FlagSet, k config.Key, name, short, usage, def string, l *config.Layer) {
	var v pflag.Value = &keyFlag{key: k, layer: l, def: def}
	if k.Kind == "bool" {
		v = &boolKeyFlag{keyFlag{key: k, layer: l, def: def}}
	}
	f := fs.VarPF(v, name, short, usage)
	f.DefValue = def
	if k.Kind == "bool" {
		f.NoOptDefVal = "true"
	}
}

// flagLayer is the layer of a command's flags.
func flagLayer() *config.Layer { return &config.Layer{Name: "flag"} }
