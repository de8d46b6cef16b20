package store

// The GORM models mirror the migrated schema (a test checks that they agree)
// and serve registries and ad-hoc reads; the ledger's hot paths use SQL.

// StreamRow is a row of streams.
type StreamRow struct {
	ID        string `gorm:"column:id;primaryKey"`
	Reality   string `gorm:"column:reality;not null"`
	HeadSeq   int64  `gorm:"column:head_seq;not null"`
	CreatedAt int64  `gorm:"column:created_at;not null;autoCreateTime:false"`
}

// TableName implements gorm's Tabler.
func (StreamRow) TableName() string { return "streams" }

// EventRow is a row of events.
type EventRow struct {
	Pos               int64  `gorm:"column:pos;primaryKey;autoIncrement:false"`
	ID                string `gorm:"column:id;not null;unique"`
	StreamID          string `gorm:"column:stream_id;not null"`
	Seq               int64  `gorm:"column:seq;not null"`
	Type              string `gorm:"column:type;not null"`
	SchemaVersion     int    `gorm:"column:schema_version;not null"`
	Payload           string `gorm:"column:payload;not null"`
	Reality           string `gorm:"column:reality;not null"`
	CausationID       string `gorm:"column:causation_id;not null"`
	CorrelationID     string `gorm:"column:correlation_id;not null"`
	RecordedAt        int64  `gorm:"column:recorded_at;not null"`
	ParentTime        int64  `gorm:"column:parent_time;not null"`
	DeliberationIndex int64  `gorm:"column:deliberation_index;not null"`
	WorldLocalTime    int64  `gorm:"column:world_local_time;not null"`
}

// TableName implements gorm's Tabler.
func (EventRow) TableName() string { return "events" }

// Models lists every GORM model, for the schema agreement test.
func Models() []any {
	return []any{&StreamRow{}, &EventRow{}, &WorldSpecRow{}, &WorldRunRow{}, &CheckpointRow{}, &ForkRow{}, &MemoryRow{}, &MemorySourceRow{}, &MemoryStateRow{}, &BlobRow{}, &WorkerRow{}}
}
