package daemon

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// loadConfig merges defaults, the config file, REPORTD_* variables and the
// flags that were set, in rising precedence. viper stays private here.
func loadConfig(flags *pflag.FlagSet) (Config, error) {
	v := viper.New()
	for k, d := range defaults {
		v.SetDefault(k, d)
	}
	v.SetEnvPrefix("REPORTD")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	for key, flag := range map[string]string{"addr": "addr", "data_dir": "data-dir"} {
		if f := flags.Lookup(flag); f != nil {
			if err := v.BindPFlag(key, f); err != nil {
				return Config{}, err
			}
		}
	}
	file, _ := flags.GetString("config")
	if file == "" {
		file = os.Getenv("REPORTD_CONFIG")
	}
	if file != "" {
		v.SetConfigFile(file)
		if err := v.ReadInConfig(); err != nil {
			return Config{}, fmt.Errorf("config %s: %w", file, err)
		}
	} else {
		v.SetConfigName("reportd")
		v.SetConfigType("yaml")
		v.AddConfigPath("/etc/reportd")
		if err := v.ReadInConfig(); err != nil && !errors.As(err, new(viper.ConfigFileNotFoundError)) {
			return Config{}, fmt.Errorf("config: %w", err)
		}
	}
	var c Config
	hook := mapstructure.ComposeDecodeHookFunc(mapstructure.StringToTimeDurationHookFunc(), byteSizeHook,
		mapstructure.StringToSliceHookFunc(","))
	if err := v.Unmarshal(&c, viper.DecodeHook(hook)); err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return c, c.validate()
}

func byteSizeHook(from, to reflect.Type, data any) (any, error) {
	if to != reflect.TypeOf(ByteSize(0)) {
		return data, nil
	}
	switch d := data.(type) {
	case string:
		return ParseByteSize(d)
	case int:
		return ByteSize(d), nil
	case int64:
		return ByteSize(d), nil
	case float64:
		return ByteSize(d), nil
	}
	return data, nil
}
