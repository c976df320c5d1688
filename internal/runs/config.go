package runs

import (
	"fmt"
	"os"
	"slices"

	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/trust"
)

// Config is a resolved configuration with the layers it was resolved
// from, so that what is resolved again over them (each sheet of a batch)
// reads no file again.
type Config struct {
	*config.Config
	// Base are the layers below the front end's: the user's file, the
	// project's and the environment's, in that order.
	Base []*config.Layer
	// Flags is the front end's layer (the command line's); nil: none.
	Flags *config.Layer
}

// loadFile reads one configuration file; a test counts the reads.
var loadFile = config.LoadFile

// LoadConfig resolves the configuration of a command run in dir, or in the
// cwd that flags set: the user's file, the project file found from there,
// the environment (getenv), then flags. The project file's settings that
// run or send something outside the sandbox (its hooks, ...) are honoured
// only when the user trusted the file as it is (package trust; else they
// are in Config.Ignored). A cwd that is not a directory is a
// *config.Error of the key cwd; a record of trusted files that cannot be
// read, a *trust.Error.
func LoadConfig(getenv func(string) string, dir string, flags *config.Layer) (Config, error) {
	user, err := loadFile(config.UserFile(getenv))
	if err != nil {
		return Config{}, err
	}
	if flags != nil && flags.Cwd != nil {
		dir = *flags.Cwd
	}
	project, err := loadFile(config.FindProjectFile(dir))
	if err != nil {
		return Config{}, err
	}
	project.Project = true
	if len(project.NeedsTrust()) > 0 {
		// Only then is the record read: a damaged one stops only the
		// commands it decides for.
		store := trust.Store{Path: config.TrustFile(getenv)}
		if project.Trusted, err = store.Trusts(project.Name, project.Sum); err != nil {
			return Config{}, err
		}
	}
	env, err := config.EnvLayer(getenv)
	if err != nil {
		return Config{}, err
	}
	c := Config{Base: []*config.Layer{user, project, env}, Flags: flags}
	if c.Config, err = c.Resolve(flags); err != nil {
		return Config{}, err
	}
	if c.Cwd == "" {
		c.Cwd = dir
	}
	if fi, err := os.Stat(c.Cwd); err != nil || !fi.IsDir() {
		return Config{}, &config.Error{Source: c.Sources["cwd"], Key: "cwd", Msg: fmt.Sprintf("%s is not a directory", c.Cwd)}
	}
	return c, nil
}

// Resolve resolves the configuration with over on top of c's base layers
// (in place of c.Flags), reading no file.
func (c Config) Resolve(over *config.Layer) (*config.Config, error) {
	return config.Resolve(append(slices.Clip(c.Base), over)...)
}
