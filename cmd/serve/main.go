package main
import (
 _ "github.com/gofiber/fiber/v2"
 _ "github.com/caarlos0/env/v10"
 _ "github.com/prometheus/client_golang/prometheus"
 _ "github.com/yalue/onnxruntime_go"
 _ "golang.org/x/sys/unix"
)
func main(){}
