package main

func init() {
	registerFieldTransforms()
	registerSchemaTransforms()
	registerRouters()
	registerHeaderTransforms()
	registerPredicates()
}

func main() {}
